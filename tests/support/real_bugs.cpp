// real_bugs.h

#include "tests/support/real_bugs.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "tests/support/files.h"
#include "tests/support/paths.h"

namespace tsrepro_test {

std::string RealBug::dir() const { return kSourceDir + "/examples/bugs/" + name + "/"; }

std::string torch_line() { return TSREPRO_TORCH_LINE; }

std::vector<RealBug> all_real_bugs() {
  const nlohmann::json catalogue = nlohmann::json::parse(read_text(kSourceDir + "/examples/bugs/bugs.json"));
  std::vector<RealBug> bugs;
  for (const nlohmann::json& entry : catalogue.at("bugs")) {
    const std::vector<std::string> lines = entry.at("reproduces_on").get<std::vector<std::string>>();
    bugs.push_back({entry.at("name"), entry.at("backend"), entry.at("kind"), entry.at("op"),
                    std::find(lines.begin(), lines.end(), torch_line()) != lines.end(),
                    entry.value("minified_by_the_tests", true), entry.value("also_under", std::vector<std::string>{}),
                    entry.value("module_form", true), entry.value("cpu_dependent", false),
                    entry.value("bisected_to", std::string())});
  }
  return bugs;
}

std::vector<RealBug> real_bugs_here(const std::string& backend, const std::string& kind) {
  std::vector<RealBug> here;
  for (const RealBug& bug : all_real_bugs())
    if (bug.reproduces_here && (backend.empty() || bug.backend == backend) && (kind.empty() || bug.kind == kind))
      here.push_back(bug);
  return here;
}

std::vector<RealBug> real_bugs_to_minify() {
  std::vector<RealBug> minified;
  for (const RealBug& bug : real_bugs_here())
    if (bug.minified_by_the_tests) {
      minified.push_back(bug);
      for (const std::string& backend : bug.also_under) {
        RealBug under = bug;
        under.backend = backend;
        under.bisected_to.clear();  // its pass under the bug's own backend, which this is not
        minified.push_back(under);
      }
    }
  std::set<std::string> built;
  for (RealBug& bug : minified) bug.builds_repro_cpp = built.insert(bug.backend).second;
  return minified;
}

std::string test_name(const RealBug& bug) {
  const auto& listed = bug.also_under;
  return std::find(listed.begin(), listed.end(), bug.backend) == listed.end() ? bug.name : bug.name + "_" + bug.backend;
}

}  // namespace tsrepro_test
