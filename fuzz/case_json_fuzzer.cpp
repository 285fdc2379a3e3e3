// The case.json reader: load_case on a case directory whose graph.ir and inputs.pt are fixed
// (the small graph of examples/models and two tensors) and whose case.json is the input.

#include <unistd.h>

#include <exception>
#include <filesystem>
#include <fstream>

#include <ATen/ATen.h>

#include "fuzz/fuzz_target.h"
#include "runner/formats/torch_save_writer.h"
#include "tsrepro/case.h"

namespace {

std::string make_case_directory() {
  const std::string dir = "/tmp/tsrepro-fuzz-case-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/graph.ir") << "graph(%x : Tensor, %y : Tensor):\n"
                                      "  %a : int = prim::Constant[value=1]()\n"
                                      "  %b : Tensor = aten::add(%x, %y, %a)\n"
                                      "  %c : Tensor = aten::relu(%b)\n"
                                      "  %d : Tensor = aten::mul(%c, %x)\n"
                                      "  return (%d)\n";
  tsrepro::write_torch_save(dir + "/inputs.pt", c10::ivalue::Tuple::create({at::ones({2, 3}), at::ones({2, 3})}));
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string dir = make_case_directory();
  {
    std::ofstream out(dir + "/case.json", std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    tsrepro::load_case(dir);
  } catch (const std::exception&) {
  }
  return 0;
}
