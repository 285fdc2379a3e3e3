#include "runner/file_util.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <ftw.h>

#include "tsrepro/error.h"

namespace tsrepro {
namespace {

int remove_entry(const char* path, const struct stat*, int, struct FTW*) {
  std::remove(path);
  return 0;  // keep going: remove what can be removed
}

std::string temporary_root() {
  const char* tmpdir = std::getenv("TMPDIR");
  return tmpdir && *tmpdir ? tmpdir : "/tmp";
}

}  // namespace

void write_file_atomically(const std::string& path, std::string_view bytes) {
  static std::atomic<unsigned> calls{0};
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::string temporary = dir + "." + name + ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(calls++);
  bool written = false;
  {
    std::ofstream out(temporary, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    written = static_cast<bool>(out);
  }
  if (!written || std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw UserError(path + ": cannot write");
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UserError(path + ": cannot open for reading");
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

void remove_tree(const std::string& path) noexcept {
  // Depth first, without following symlinks: children go before their directory.
  ::nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

std::string process_scratch_path(long pid) { return temporary_root() + "/tsrepro-process-" + std::to_string(pid); }

ScratchDirectory ScratchDirectory::temporary(const std::string& prefix) {
  std::string pattern = temporary_root() + "/" + prefix + "-XXXXXX";
  if (!::mkdtemp(pattern.data())) throw UserError(pattern + ": cannot create a temporary directory");
  return ScratchDirectory(pattern);
}

ScratchDirectory ScratchDirectory::at(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw UserError(path + ": cannot create a directory: " + ec.message());
  return ScratchDirectory(path);
}

ScratchDirectory& ScratchDirectory::operator=(ScratchDirectory&& other) noexcept {
  if (this != &other) {
    if (!path_.empty()) remove_tree(path_);
    path_ = std::move(other.path_);
    other.path_.clear();
  }
  return *this;
}

}  // namespace tsrepro
