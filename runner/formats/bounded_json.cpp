#include "runner/formats/bounded_json.h"

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

namespace {

// The SAX side of scan_top_level_array: depth 1 is the top-level object, 2 the array's entries,
// 3 the fields of an entry that is an object.
class TopLevelArrayScan : public nlohmann::json_sax<nlohmann::json> {
 public:
  TopLevelArrayScan(const std::string& key, const std::string& field, const std::string& origin, TopLevelArray& out)
      : key_(key), field_(field), origin_(origin), out_(out) {}

  bool null() override { return scalar(nullptr); }
  bool boolean(bool v) override { return scalar(v); }
  bool number_integer(number_integer_t v) override { return scalar(v); }
  bool number_unsigned(number_unsigned_t v) override { return scalar(v); }
  bool number_float(number_float_t v, const string_t&) override { return scalar(v); }
  bool binary(binary_t&) override { return value(); }
  bool string(string_t& text) override {
    if (in_array_ && depth_ == 3 && last_key_ == field_) out_.fields.push_back(text);
    return scalar(text);
  }
  bool start_object(std::size_t) override { return open(); }
  bool start_array(std::size_t) override {
    const bool starts = depth_ == 1 && last_key_ == key_;
    if (!open()) return false;
    if (starts) in_array_ = true;
    return true;
  }
  bool end_object() override { return close(); }
  bool end_array() override {
    if (depth_ == 2) in_array_ = false;
    return close();
  }
  bool key(string_t& name) override {
    last_key_ = name;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    throw UserError(origin_ + ": not valid JSON: " + e.what());
  }

 private:
  // An entry starts at depth 2 of the array: a value there, or an object or array opened there.
  void count_entry() {
    if (in_array_ && depth_ == 2 && ++out_.entries > limits::kMaxCaseEntries)
      throw UserError(origin_ + ": " + key_ + ": more than " + std::to_string(limits::kMaxCaseEntries) +
                      " entries, over tsrepro's limit of " + std::to_string(limits::kMaxCaseEntries));
  }
  bool value() {
    count_entry();
    return true;
  }
  bool scalar(nlohmann::json v) {
    if (depth_ == 1) out_.top_level_scalars[last_key_] = std::move(v);
    return value();
  }
  bool open() {
    count_entry();
    if (++depth_ > limits::kMaxNestingDepth)
      throw UserError(origin_ + ": arrays and objects nested deeper than tsrepro's limit of " +
                      std::to_string(limits::kMaxNestingDepth));
    return true;
  }
  bool close() {
    --depth_;
    return true;
  }

  const std::string& key_;
  const std::string& field_;
  const std::string& origin_;
  TopLevelArray& out_;
  size_t depth_ = 0;
  bool in_array_ = false;
  std::string last_key_;
};

}  // namespace

TopLevelArray scan_top_level_array(const std::string& text, const std::string& key, const std::string& field,
                                   const std::string& origin) {
  TopLevelArray out;
  TopLevelArrayScan scan(key, field, origin, out);
  nlohmann::json::sax_parse(text, &scan);
  return out;
}

}  // namespace tsrepro
