#include "runner/file_util.h"

#include <cstdio>

#include <ftw.h>

namespace tsrepro {
namespace {

int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  std::remove(path);
  return 0;  // keep going: remove what can be removed
}

}  // namespace

void remove_tree(const std::string& path) noexcept {
  // Depth first, without following symlinks: children go before their directory.
  ::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

}  // namespace tsrepro
