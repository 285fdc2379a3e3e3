// Loading extension libraries of custom operators (see extension_libraries.h).

#include "runner/case/extension_libraries.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "tsrepro/error.h"

namespace tsrepro {
namespace {

std::vector<std::string>& loaded() {
  static std::vector<std::string> paths;
  return paths;
}

std::vector<std::string> paths_from_environment() {
  std::vector<std::string> paths;
  const char* value = std::getenv(kLoadLibraryVariable);
  std::stringstream list(value ? value : "");
  for (std::string path; std::getline(list, path, ':');)
    if (!path.empty()) paths.push_back(path);
  return paths;
}

}  // namespace

void load_extension_libraries(const std::vector<std::string>& paths) {
  std::vector<std::string> wanted = paths_from_environment();
  wanted.insert(wanted.end(), paths.begin(), paths.end());
  for (const std::string& path : wanted) {
    std::error_code ec;
    const std::string absolute = std::filesystem::absolute(path, ec).lexically_normal().string();
    if (std::find(loaded().begin(), loaded().end(), absolute) != loaded().end()) continue;
    if (!std::filesystem::exists(absolute)) throw UserError(path + ": cannot load the library: no such file");
    // RTLD_GLOBAL: an extension may be split over libraries that resolve each other's symbols.
    if (!::dlopen(absolute.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      const char* why = ::dlerror();
      throw UserError(path + ": cannot load the library: " + (why ? why : "dlopen failed"));
    }
    loaded().push_back(absolute);
  }
  if (loaded().empty()) return;
  std::string joined;
  for (const std::string& path : loaded()) joined += (joined.empty() ? "" : ":") + path;
  ::setenv(kLoadLibraryVariable, joined.c_str(), 1);
}

const std::vector<std::string>& loaded_extension_libraries() { return loaded(); }

}  // namespace tsrepro
