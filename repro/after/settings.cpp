// TSREPRO_AFTER / TSREPRO_LEVEL / TSREPRO_DIR, read and checked.

#include <cstdlib>
#include <string>

#include "runner/inputs.h"
#include "tsrepro/after.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

std::string variable(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

}  // namespace

AfterSettings AfterSettings::from_environment() {
  AfterSettings s;
  const std::string after = variable("TSREPRO_AFTER");
  if (after.empty() || after == "0" || after == "off")
    s.stage = Stage::Off;
  else if (after == "graph")
    s.stage = Stage::Graph;
  else if (after == "fusion")
    s.stage = Stage::Fusion;
  else
    throw UserError("TSREPRO_AFTER=" + after + ": expected graph or fusion");

  const std::string level = variable("TSREPRO_LEVEL");
  if (!level.empty()) {
    if (level.size() != 1 || level[0] < '1' || level[0] > '4')
      throw UserError("TSREPRO_LEVEL=" + level + ": expected 1, 2, 3 or 4");
    s.level = level[0] - '0';
  }
  const std::string dir = variable("TSREPRO_DIR");
  if (!dir.empty()) s.dir = dir;
  return s;
}

std::vector<c10::IValue> load_inputs(const std::string& path) { return read_input_values(path); }

}  // namespace tsrepro
