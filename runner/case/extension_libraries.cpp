// Loading extension libraries of custom operators (see extension_libraries.h).

#include "runner/case/extension_libraries.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include "runner/formats/bounded_json.h"
#include "runner/file_util.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

std::vector<ExtensionLibrary>& loaded() {
  static std::vector<ExtensionLibrary> libraries;
  return libraries;
}

std::vector<std::string> paths_from_environment() {
  std::vector<std::string> paths;
  const char* value = std::getenv(kLoadLibraryVariable);
  std::stringstream list(value ? value : "");
  for (std::string path; std::getline(list, path, ':');)
    if (!path.empty()) paths.push_back(path);
  return paths;
}

std::set<std::string> operator_names() {
  std::set<std::string> names;
  for (const auto& op : torch::jit::getAllOperators()) names.insert(op->schema().name());
  return names;
}

}  // namespace

void load_extension_libraries(const std::vector<std::string>& paths) {
  std::vector<std::string> wanted = paths_from_environment();
  wanted.insert(wanted.end(), paths.begin(), paths.end());
  for (const std::string& path : wanted) {
    std::error_code ec;
    const std::string absolute = std::filesystem::absolute(path, ec).lexically_normal().string();
    const bool known = std::any_of(loaded().begin(), loaded().end(),
                                   [&](const ExtensionLibrary& library) { return library.path == absolute; });
    if (known) continue;
    if (!std::filesystem::exists(absolute)) throw UserError(path + ": cannot load the library: no such file");
    const std::set<std::string> before = operator_names();
    // RTLD_GLOBAL: an extension may be split over libraries that resolve each other's symbols.
    if (!::dlopen(absolute.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      const char* why = ::dlerror();
      throw UserError(path + ": cannot load the library: " + (why ? why : "dlopen failed"));
    }
    ExtensionLibrary library{absolute, {}};
    for (const std::string& name : operator_names())
      if (!before.count(name)) library.ops.push_back(name);
    loaded().push_back(std::move(library));
  }
  if (loaded().empty()) return;
  std::string joined;
  for (const ExtensionLibrary& library : loaded()) joined += (joined.empty() ? "" : ":") + library.path;
  ::setenv(kLoadLibraryVariable, joined.c_str(), 1);
}

const std::vector<ExtensionLibrary>& loaded_extension_libraries() { return loaded(); }

std::string python_package_of(const std::string& library_path) {
  std::string package;
  std::error_code ec;
  for (std::filesystem::path dir = std::filesystem::path(library_path).parent_path();
       dir.has_filename() && std::filesystem::exists(dir / "__init__.py", ec); dir = dir.parent_path())
    package = dir.filename().string() + (package.empty() ? "" : "." + package);
  return package;
}

std::vector<ExtensionLibrary> libraries_called_by(const torch::jit::Graph& graph,
                                                  const std::vector<ExtensionLibrary>& libraries) {
  std::set<std::string> called;
  std::vector<const torch::jit::Block*> blocks{graph.block()};
  while (!blocks.empty()) {
    const torch::jit::Block* block = blocks.back();
    blocks.pop_back();
    for (const torch::jit::Node* node : block->nodes()) {
      called.insert(node->kind().toQualString());
      for (const torch::jit::Block* inner : node->blocks()) blocks.push_back(inner);
    }
  }
  std::vector<ExtensionLibrary> needed;
  std::set<std::string> paths;
  for (const ExtensionLibrary& library : libraries) {
    if (!paths.insert(library.path).second) continue;
    ExtensionLibrary used{library.path, {}};
    for (const std::string& op : library.ops)
      if (called.count(op)) used.ops.push_back(op);
    if (!used.ops.empty()) needed.push_back(std::move(used));
  }
  return needed;
}

std::vector<ExtensionLibrary> libraries_of_case(const Case& c) {
  std::vector<ExtensionLibrary> all = c.libraries;
  all.insert(all.end(), loaded().begin(), loaded().end());
  return libraries_called_by(*c.graph, all);
}

std::vector<std::string> recorded_library_paths(const std::string& case_dir) {
  const std::string path = case_dir + "/case.json";
  try {
    // A scan, not the file's DOM: this runs before every command on a case, whatever its size.
    return scan_top_level_array(read_file(path), "libraries", "path", path).fields;
  } catch (const UserError&) {
    return {};  // load_case names the problem when the command reads the case
  }
}

}  // namespace tsrepro
