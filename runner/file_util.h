#pragma once
// File-system helpers that must not go through std::filesystem.

#include <string>
#include <string_view>

namespace tsrepro {

// Writes `bytes` to `path` through a temporary sibling (unique to this process and call) that is
// renamed into place: a reader, a slot running in parallel or a run killed midway sees the old
// file or the new one, never half of one. Throws UserError naming the path when it cannot write.
void write_file_atomically(const std::string& path, std::string_view bytes);

// Removes a file or a whole directory tree; errors are ignored (it cleans up after us).
// Not std::filesystem::remove_all: PyTorch 2.x's libtorch.so exports its own copy of that
// symbol, which interposes the one in libstdc++ and crashes (seen with torch 2.11).
void remove_tree(const std::string& path) noexcept;

}  // namespace tsrepro
