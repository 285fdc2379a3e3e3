#pragma once
// JSON from a user's file (case.json, an --origins file, a zoo.json), parsed within tsrepro's
// limits: nlohmann's parser is iterative, but copying or comparing a value recurses once per
// level, and a provenance nested 100,000 deep overflowed the stack in case_from_json.

#include <string>

#include <nlohmann/json.hpp>

namespace tsrepro {

// Throws UserError("ORIGIN: not valid JSON: ...") or ("ORIGIN: arrays and objects nested
// deeper than tsrepro's limit of N").
nlohmann::json parse_bounded_json(const std::string& text, const std::string& origin);

// Throws UserError("ORIGIN: N entries, over tsrepro's limit of M") for an array longer than
// limits::kMaxCaseEntries.
void check_entry_count(const nlohmann::json& array, const std::string& origin);

}  // namespace tsrepro
