#pragma once
// Shared helpers of the runner tests: fixture paths, temporary directories, running a graph.

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "runner/file_util.h"

namespace tsrepro::testing {

inline std::string source_path(const std::string& relative) { return std::string(TSREPRO_SOURCE_DIR) + "/" + relative; }
inline std::string model_path(const std::string& file) { return source_path("examples/models/" + file); }

// A fresh empty directory under the system temp dir, removed when the object dies.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tsrepro-test-XXXXXX").string();
    path_ = ::mkdtemp(pattern.data());
  }
  ~TempDir() { remove_tree(path_.string()); }
  std::string path() const { return path_.string(); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

nlohmann::json example_manifest();

}  // namespace tsrepro::testing
