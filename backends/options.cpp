// The one reading of --backend-opt values (backends/options.h).

#include "backends/options.h"

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

void refuse_pass_stop_in_reproducer(const BackendOptions& options) {
  const auto found = options.find("passes");
  if (found != options.end())
    throw UserError("--backend-opt passes=" + found->second +
                    ": a stop between the backend's passes is `tsrepro explain --passes`' own; a reproducer runs "
                    "the backend whole: drop passes=");
}

}  // namespace tsrepro
