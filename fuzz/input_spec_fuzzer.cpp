// The --input-spec parser, and the fake inputs drawn from what it accepts (small ones: a spec
// of a billion elements is a legitimate request this harness does not want to allocate).

#include <exception>

#include "fuzz/fuzz_target.h"
#include "runner/case/input_spec_text.h"
#include "runner/case/inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<tsrepro::InputSpec> specs;
  try {
    specs = tsrepro::parse_input_spec(tsrepro::fuzz::as_text(data, size));
  } catch (const std::exception&) {
    return 0;
  }
  for (const tsrepro::InputSpec& spec : specs) {
    int64_t numel = 1;
    for (int64_t size : spec.sizes)
      if (size < 0 || __builtin_mul_overflow(numel, size, &numel)) return 0;
    if (numel > 4096) return 0;
  }
  try {
    tsrepro::make_fake_inputs(specs, tsrepro::kDefaultFakeSeed);
  } catch (const std::exception&) {
  }
  return 0;
}
