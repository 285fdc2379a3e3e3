// The IR reader: tsrepro's checks around libtorch's parser (limits, origin comments), then the
// property that makes a case directory work: IR tsrepro read, it writes back as IR it reads
// again (issue 31: a file name with a newline broke exactly that).

#include <cstdlib>
#include <exception>

#include <torch/csrc/jit/ir/ir.h>

#include "fuzz/fuzz_target.h"
#include "tsrepro/case.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::shared_ptr<torch::jit::Graph> graph;
  try {
    graph = tsrepro::graph_from_ir(tsrepro::fuzz::as_text(data, size), "fuzz.ir");
  } catch (const std::exception&) {
    return 0;  // refused: fine
  }
  std::string written;
  try {
    written = tsrepro::graph_to_ir(*graph);
  } catch (const std::exception&) {
    return 0;  // a graph libtorch parsed but cannot print (it checks as it prints)
  }
  try {
    tsrepro::graph_from_ir(written, "fuzz.ir written back");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "read back failed: %s\n--- written ---\n%s\n", e.what(), written.c_str());
    std::abort();
  }
  return 0;
}
