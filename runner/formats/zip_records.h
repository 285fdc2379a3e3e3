#pragma once
// The sizes of the records in a zip archive (a torch.save or torch.jit.save file), read from its
// central directory. libtorch 1.13's PyTorchStreamReader tells a record's offset but not its
// size, and builds a storage of the size the pickle declares over a record that may be shorter:
// a truncated record would be read past its end.

#include <cstdint>
#include <map>
#include <string>

namespace tsrepro {

// Record name (without the archive's top folder, as PyTorchStreamReader names it: "data/0")
// to its uncompressed size in bytes. Throws std::runtime_error for an archive whose directory
// cannot be read.
std::map<std::string, uint64_t> zip_record_sizes(const std::string& path);

}  // namespace tsrepro
