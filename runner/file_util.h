#pragma once
// File-system helpers that must not go through std::filesystem.

#include <string>
#include <string_view>
#include <utility>

namespace tsrepro {

// Writes `bytes` to `path` through a temporary sibling (unique to this process and call) that is
// renamed into place: a reader, a slot running in parallel or a run killed midway sees the old
// file or the new one, never half of one. Throws UserError naming the path when it cannot write.
void write_file_atomically(const std::string& path, std::string_view bytes);

// The whole file's bytes. Throws UserError naming the path when it cannot be opened.
std::string read_file(const std::string& path);

// Removes a file or a whole directory tree; errors are ignored (it cleans up after us).
// Not std::filesystem::remove_all: PyTorch 2.x's libtorch.so exports its own copy of that
// symbol, which interposes the one in libstdc++ and crashes (seen with torch 2.11).
void remove_tree(const std::string& path) noexcept;

// Where process `pid` keeps the files it needs for as long as it lives (the PyTorch 2 backends'
// compiled programs): $TMPDIR/tsrepro-process-<pid>. A worker ends by _exit or is killed, so it
// cannot remove that directory itself: whoever waits for a worker removes the worker's
// (RunnerProcess::stop), and a process that exits normally removes its own (ScratchDirectory).
std::string process_scratch_path(long pid);

// A directory of its own, removed with everything in it (remove_tree) when the object goes, an
// exception or an early return included. Move-only.
class ScratchDirectory {
 public:
  // A fresh $TMPDIR/<prefix>-XXXXXX. Throws UserError naming it when it cannot be made.
  static ScratchDirectory temporary(const std::string& prefix);
  // `path` itself, made with its parents.
  static ScratchDirectory at(const std::string& path);

  ScratchDirectory() = default;  // none: nothing to remove
  ScratchDirectory(ScratchDirectory&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  ScratchDirectory& operator=(ScratchDirectory&& other) noexcept;
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  ~ScratchDirectory() {
    if (!path_.empty()) remove_tree(path_);
  }

  const std::string& path() const { return path_; }

 private:
  explicit ScratchDirectory(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace tsrepro
