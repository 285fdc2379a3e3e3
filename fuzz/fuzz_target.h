#pragma once
// What every fuzz target here shares: the libFuzzer entry point's signature, and the rule that
// a reader may refuse its input (UserError, or any std::exception: the CLI turns each into one
// line and exit 2) but must never crash, hang or touch memory it does not own. libFuzzer with
// AddressSanitizer finds the latter; scripts/fuzz.sh runs a target, fuzz/replay_main.cpp runs
// the saved inputs (fuzz/seeds, fuzz/regressions) in the normal test suite.

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace tsrepro::fuzz {

inline std::string as_text(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace tsrepro::fuzz
