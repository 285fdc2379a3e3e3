#include "runner/case/bounded_json.h"

#include "tsrepro/error.h"
#include "tsrepro/limits.h"

namespace tsrepro {

nlohmann::json parse_bounded_json(const std::string& text, const std::string& origin) {
  auto within_depth = [&origin](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > static_cast<int>(limits::kMaxNestingDepth))
      throw UserError(origin + ": arrays and objects nested deeper than tsrepro's limit of " +
                      std::to_string(limits::kMaxNestingDepth));
    return true;
  };
  try {
    return nlohmann::json::parse(text, within_depth);
  } catch (const nlohmann::json::exception& e) {
    throw UserError(origin + ": not valid JSON: " + e.what());
  }
}

void check_entry_count(const nlohmann::json& array, const std::string& origin) {
  if (array.is_array() && array.size() > limits::kMaxCaseEntries)
    throw UserError(origin + ": " + std::to_string(array.size()) + " entries, over tsrepro's limit of " +
                    std::to_string(limits::kMaxCaseEntries));
}

}  // namespace tsrepro
