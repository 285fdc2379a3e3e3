// Temporary directories and small file helpers of the tests.

#include "tests/support/files.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "runner/file_util.h"

namespace tsrepro_test {

TempDir::TempDir() {
  std::string pattern = (fs::temp_directory_path() / "tsrepro-test-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error("mkdtemp failed: " + std::string(std::strerror(errno)));
  path_ = pattern;
}

// Not std::filesystem::remove_all: see runner/file_util.h.
TempDir::~TempDir() { tsrepro::remove_tree(path_.string()); }

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::set<std::string> list_dir(const fs::path& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    names.insert(it->path().filename().string());
  return names;
}

std::string join(const std::set<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return "{" + s + "}";
}

std::vector<std::string> temp_siblings(const fs::path& dir, const std::string& name) {
  std::vector<std::string> found;
  for (const std::string& n : list_dir(dir))
    if (n.rfind("." + name + ".tmp-", 0) == 0) found.push_back(n);
  return found;
}

}  // namespace tsrepro_test
