#pragma once
// Temporary directories and small file helpers of the tests.

#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace tsrepro_test {

namespace fs = std::filesystem;

// A fresh empty directory under the system temp dir, removed (with everything in it) when the
// object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::string read_text(const fs::path& path);
void write_text(const fs::path& path, const std::string& text);

// Names in a directory (not recursive), sorted; empty when it does not exist.
std::set<std::string> list_dir(const fs::path& dir);
// "{a, b}": for failure messages.
std::string join(const std::set<std::string>& names);
// Hidden siblings an interrupted atomic write would leave: ".NAME.tmp-*".
std::vector<std::string> temp_siblings(const fs::path& dir, const std::string& name);

}  // namespace tsrepro_test
