#pragma once
// File-system helpers that must not go through std::filesystem.

#include <string>

namespace tsrepro {

// Removes a file or a whole directory tree; errors are ignored (it cleans up after us).
// Not std::filesystem::remove_all: PyTorch 2.x's libtorch.so exports its own copy of that
// symbol, which interposes the one in libstdc++ and crashes (seen with torch 2.11).
void remove_tree(const std::string& path) noexcept;

}  // namespace tsrepro
