#pragma once
// The limits tsrepro holds every file it reads to. Each is far beyond what a real model needs
// (the largest torchvision and torchaudio models stay under a tenth of each) and far below what
// would crash or stall tsrepro: past them a recursive walk would overflow the stack, or
// libtorch's interpreter (whose construction is quadratic in constants) would take minutes.
// A file beyond one is refused with one line naming the file and the limit. docs/FORMATS.md
// ("Limits") states them for users; tests/limits_test.cpp checks that it says these numbers.

#include <cstddef>

namespace tsrepro::limits {

// Blocks nested in a graph (prim::If / prim::Loop bodies), containers nested in an inputs.pt or
// a module's state, arrays and objects nested in case.json.
inline constexpr size_t kMaxNestingDepth = 256;
// Bytes in one identifier: a value name in graph.ir (%name), an input's name.
inline constexpr size_t kMaxIdentifierBytes = 4096;
// Nodes in one graph, counting those inside blocks.
inline constexpr size_t kMaxGraphNodes = 500000;
// prim::Constant nodes in one graph.
inline constexpr size_t kMaxGraphConstants = 50000;
// Entries in one of case.json's arrays (inputs, node_origins).
inline constexpr size_t kMaxCaseEntries = 1000000;

}  // namespace tsrepro::limits
