// The one reading of --backend-opt values (backends/options.h).

#include "backends/options.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "tsrepro/error.h"

namespace tsrepro {

bool option_flag(const BackendOptions& options, const std::string& key, bool fallback) {
  const auto found = options.find(key);
  if (found == options.end()) return fallback;
  if (found->second == "1" || found->second == "true" || found->second == "on") return true;
  if (found->second == "0" || found->second == "false" || found->second == "off") return false;
  throw UserError("--backend-opt " + key + "=" + found->second + ": expected 0 or 1");
}

std::string option_choice(const BackendOptions& options, const std::string& key,
                          std::initializer_list<const char*> choices, const std::string& fallback) {
  const auto found = options.find(key);
  if (found == options.end()) return fallback;
  std::string known;
  for (const char* choice : choices) {
    if (found->second == choice) return found->second;
    known += (known.empty() ? "" : " or ") + std::string(choice);
  }
  throw UserError("--backend-opt " + key + "=" + found->second + ": expected " + known);
}

std::optional<size_t> option_count(const BackendOptions& options, const std::string& key) {
  const auto found = options.find(key);
  if (found == options.end()) return std::nullopt;
  const std::string& text = found->second;
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos || text == "0")
    throw UserError("--backend-opt " + key + "=" + text + ": expected a count, 1 or more");
  return std::stoul(text);
}

std::optional<BisectPoint> option_bisect_point(const BackendOptions& options) {
  const auto found = options.find("bisect");
  if (found == options.end()) return std::nullopt;
  const std::string& text = found->second;
  std::vector<std::string> parts{""};
  for (const char ch : text) {
    if (ch == ':')
      parts.emplace_back();
    else
      parts.back() += ch;
  }
  const auto identifier = [](const std::string& word) {
    return !word.empty() && word.size() <= 100 && !std::isdigit(static_cast<unsigned char>(word[0])) &&
           std::all_of(word.begin(), word.end(),
                       [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; });
  };
  const auto keep = [](const std::string& word) {
    return word == "all" ||
           (!word.empty() && word.size() <= 9 && word.find_first_not_of("0123456789") == std::string::npos);
  };
  const bool valid = (parts.size() == 1 && identifier(parts[0])) ||
                     (parts.size() == 3 && identifier(parts[0]) && identifier(parts[1]) && keep(parts[2]));
  if (!valid)
    throw UserError("--backend-opt bisect=" + text +
                    ": expected STAGE or STAGE:SUBSYSTEM:KEEP (as inductor:lowerings:3; KEEP a count from 0, or all)");
  if (parts.size() == 1) return BisectPoint{text, parts[0], "", ""};
  return BisectPoint{text, parts[0], parts[1], parts[2]};
}

void refuse_pass_stop_in_reproducer(const BackendOptions& options) {
  for (const char* key : {"passes", "bisect"}) {
    const auto found = options.find(key);
    if (found != options.end())
      throw UserError(std::string("--backend-opt ") + key + "=" + found->second +
                      ": a stop inside the backend is `tsrepro explain --passes`' own; a reproducer runs the "
                      "backend whole: drop " +
                      key + "=");
  }
}

}  // namespace tsrepro
