// The torch.save reader (inputs.pt): the pickle rewrite, libtorch's unpickler, tsrepro's checks
// on what it built (nesting, cycles, tensors within their storages and records), then what
// import does next with each value (its spec: sizes, strides, and the values' min and max).

#include <unistd.h>

#include <exception>
#include <fstream>

#include "fuzz/fuzz_target.h"
#include "runner/formats/torch_save_reader.h"
#include "tsrepro/case.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/tsrepro-fuzz-torch-save-" + std::to_string(::getpid()) + ".pt";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    const c10::IValue value = tsrepro::read_torch_save(path);
    if (value.isTuple())
      for (const c10::IValue& element : value.toTupleRef().elements()) tsrepro::spec_from_value("input", element);
    else
      tsrepro::spec_from_value("input", value);
  } catch (const std::exception&) {
  }
  return 0;
}
