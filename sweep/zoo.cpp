// read_zoo: a manifest's entries, or the zoo directory's model and case subdirectories.

#include "sweep/zoo.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "tsrepro/error.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace tsrepro {
namespace {

bool is_safe_name(const std::string& name) {
  return !name.empty() && name.size() <= 100 && name[0] != '.' &&
         std::all_of(name.begin(), name.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '_' || c == '-' || c == '.'; });
}

// A manifest path: absolute as it is, relative to the manifest's directory otherwise.
std::string resolved(const fs::path& base, const std::string& path) {
  return fs::absolute(fs::path(path).is_absolute() ? fs::path(path) : base / path).lexically_normal().string();
}

std::vector<ZooEntry> entries_of_manifest(const fs::path& manifest) {
  std::ifstream in(manifest);
  const json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("models") || !j["models"].is_array())
    throw UserError(manifest.string() + ": not a zoo manifest (a JSON object with a \"models\" list)");
  const fs::path base = manifest.parent_path();
  std::vector<ZooEntry> entries;
  for (const json& m : j["models"]) {
    if (!m.is_object() || !m.contains("name") || !m["name"].is_string())
      throw UserError(manifest.string() + ": every entry of \"models\" needs a \"name\"");
    ZooEntry e;
    e.name = m["name"].get<std::string>();
    auto text = [&](const char* key) {
      if (!m.contains(key)) return std::string();
      if (!m[key].is_string()) throw UserError(manifest.string() + ": " + e.name + ": \"" + key + "\" is not a string");
      return resolved(base, m[key].get<std::string>());
    };
    e.model = text("model");
    e.inputs = text("inputs");
    e.case_dir = text("case");
    if (e.model.empty() == e.case_dir.empty())
      throw UserError(manifest.string() + ": " + e.name + ": name either a \"model\" or a \"case\"");
    entries.push_back(e);
  }
  return entries;
}

std::vector<ZooEntry> entries_of_directory(const fs::path& zoo) {
  std::vector<ZooEntry> entries;
  for (const fs::directory_entry& d : fs::directory_iterator(zoo)) {
    if (!d.is_directory()) continue;
    ZooEntry e;
    e.name = d.path().filename().string();
    if (fs::exists(d.path() / "case.json")) {
      e.case_dir = fs::absolute(d.path()).string();
    } else if (fs::exists(d.path() / "model.pt")) {
      e.model = fs::absolute(d.path() / "model.pt").string();
      if (fs::exists(d.path() / "inputs.pt")) e.inputs = fs::absolute(d.path() / "inputs.pt").string();
    } else {
      continue;  // not a model: data, scripts
    }
    entries.push_back(e);
  }
  return entries;
}

}  // namespace

std::vector<ZooEntry> read_zoo(const std::string& zoo) {
  std::error_code ec;
  if (!fs::is_directory(zoo, ec)) throw UserError(zoo + ": not a directory (a zoo is a directory of models)");
  const fs::path manifest = fs::path(zoo) / "zoo.json";
  std::vector<ZooEntry> entries = fs::exists(manifest) ? entries_of_manifest(manifest) : entries_of_directory(zoo);
  std::sort(entries.begin(), entries.end(), [](const ZooEntry& a, const ZooEntry& b) { return a.name < b.name; });
  std::set<std::string> names;
  for (const ZooEntry& e : entries) {
    if (!is_safe_name(e.name))
      throw UserError(zoo + ": model name '" + e.name + "': use letters, digits, '_', '-' and '.' (at most 100)");
    if (!names.insert(e.name).second) throw UserError(zoo + ": model name '" + e.name + "' appears twice");
    for (const std::string& path : {e.model, e.inputs, e.case_dir})
      if (!path.empty() && !fs::exists(path)) throw UserError(zoo + ": " + e.name + ": " + path + " does not exist");
  }
  if (entries.empty()) throw UserError(zoo + ": no models (subdirectories with model.pt or case.json, or zoo.json)");
  return entries;
}

}  // namespace tsrepro
