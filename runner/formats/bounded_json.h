#pragma once
// JSON from a user's file (case.json, an --origins file, a zoo.json), parsed within tsrepro's
// limits: nlohmann's parser is iterative, but copying or comparing a value recurses once per
// level, and a provenance nested 100,000 deep overflowed the stack in case_from_json.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tsrepro {

// Throws UserError("ORIGIN: not valid JSON: ...") or ("ORIGIN: arrays and objects nested
// deeper than tsrepro's limit of N").
nlohmann::json parse_bounded_json(const std::string& text, const std::string& origin);

// Throws UserError("ORIGIN: N entries, over tsrepro's limit of M") for an array longer than
// limits::kMaxCaseEntries.
void check_entry_count(const nlohmann::json& array, const std::string& origin);

// One pass over the text that builds nothing (a SAX scan: linear in the file, whatever it holds),
// for what must be known before a file is read whole: how many entries the top-level object's
// array `key` has, and the string `field` of each of its entries that is an object. Throws
// parse_bounded_json's errors, and check_entry_count's (naming ORIGIN: KEY) for an array over
// the limit, as soon as it is seen.
struct TopLevelArray {
  size_t entries = 0;
  std::vector<std::string> fields;
  std::map<std::string, nlohmann::json> top_level_scalars;  // the top-level object's values that are no array or object
};
TopLevelArray scan_top_level_array(const std::string& text, const std::string& key, const std::string& field,
                                   const std::string& origin);

}  // namespace tsrepro
