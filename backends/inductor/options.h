#pragma once
// inductor's options (--backend-opt), read once for the runner (backend.cpp), the writers
// (section.cpp) and aoti, which compiles with the same config:
//   mode=default|reduce-overhead|max-autotune|max-autotune-no-cudagraphs, dynamic=auto|0|1
//     torch.compile's arguments;
//   freezing=0|1          torch._inductor.config.freezing;
//   config=KEY=VALUE[;KEY=VALUE...]
//     any torch._inductor.config keys, each VALUE a Python literal (1, 0.5, True, None, 'text');
//     the torch in use is asked whether it has each key and the value fits it, once per command
//     before any case runs (backends/inductor_config_check.h);
//   bisect=STAGE[:SUBSYSTEM:KEEP]
//     `tsrepro explain --passes`' switch of PyTorch's CompilerBisector (backends/options.h); aoti's
//     stages are its own (backends/aoti/compile.py). Never in a reproducer.
// The compile server (backends/pt2_compile_server.py) gets them as server_options(): the config
// as "config.KEY" entries holding the literal's text, which it reads with ast.literal_eval.

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/options.h"
#include "tsrepro/error.h"

namespace tsrepro {

struct InductorOptions {
  std::string mode = "default";
  std::string dynamic = "auto";
  std::vector<std::pair<std::string, std::string>> config;  // torch._inductor.config key, Python literal
  std::optional<std::string> bisect;

  static InductorOptions from(const BackendOptions& options) {
    InductorOptions o;
    o.mode = option_choice(options, "mode",
                           {"default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"}, "default");
    o.dynamic = option_choice(options, "dynamic", {"auto", "0", "1"}, "auto");
    if (options.count("freezing"))
      o.config.emplace_back("freezing", option_flag(options, "freezing", false) ? "True" : "False");
    const auto config = options.find("config");
    if (config != options.end()) o.add_config(config->second);
    if (const std::optional<BisectPoint> point = option_bisect_point(options)) o.bisect = point->text;
    return o;
  }

  // The config as a Python dict literal ({'freezing': True}), keys quoted by `quote` (a
  // reproducer dialect's string_literal): what the reproducers pass to torch._inductor's config.
  std::string config_dict(std::string (*quote)(std::string_view)) const {
    std::string dict;
    for (const auto& [key, literal] : config) dict += (dict.empty() ? "" : ", ") + quote(key) + ": " + literal;
    return "{" + dict + "}";
  }

  BackendOptions server_options() const {
    BackendOptions out{{"mode", mode}, {"dynamic", dynamic}};
    for (const auto& [key, literal] : config) out["config." + key] = literal;
    if (bisect) out["bisect"] = *bisect;
    return out;
  }

 private:
  // The longest key and value taken: torch._inductor.config's keys are under 60 characters, and a
  // value is a number, a flag or a short word; anything longer is no setting.
  static constexpr size_t kMaxKey = 100, kMaxValue = 200;

  // KEY=VALUE entries split at ';' (an empty one, as after a last ';', is nothing). Their syntax
  // only: whether torch._inductor.config has the key, and the value fits it, is asked of the torch
  // in use (Backend::check_options_with_compiler, backends/inductor_config_check.h).
  void add_config(const std::string& text) {
    // The entry as the error shows it: a long one cut, so that the reason stays on the line.
    const auto refuse = [](const std::string& item, const std::string& why) {
      const std::string shown =
          item.size() > 80 ? item.substr(0, 60) + "... (" + std::to_string(item.size()) + " characters)" : item;
      throw UserError("--backend-opt config: '" + shown + "' " + why);
    };
    size_t start = 0;
    while (start < text.size()) {
      const size_t end = std::min(text.find(';', start), text.size());
      const std::string item = text.substr(start, end - start);
      start = end + 1;
      if (item.empty()) continue;
      const size_t eq = item.find('=');
      if (eq == std::string::npos) refuse(item, "is not KEY=VALUE");
      const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
      if (!is_config_key(key)) refuse(item, "has no config key before '=' (names joined by dots, as cpp.threads)");
      if (!is_python_literal(value))
        refuse(item, "has no value tsrepro takes after '=' (a Python literal: 1, 0.5, True, None, 'text')");
      config.emplace_back(key, value);
    }
    if (config.empty())
      throw UserError("--backend-opt config=" + text +
                      ": no KEY=VALUE in it (torch._inductor.config keys, "
                      "as config=cpp.threads=4;max_autotune=True)");
  }

  // Identifiers joined by dots, as torch._inductor.config names its keys (cpp.threads).
  static bool is_config_key(const std::string& key) {
    if (key.empty() || key.size() > kMaxKey) return false;
    bool word_start = true;
    for (const char ch : key) {
      const bool letter = std::isalpha(static_cast<unsigned char>(ch)) || ch == '_';
      if (ch == '.' ? word_start : !(letter || (!word_start && std::isdigit(static_cast<unsigned char>(ch)))))
        return false;
      word_start = ch == '.';
    }
    return !word_start;
  }

  // What ast.literal_eval reads and a reproducer can write as it is: a number, True, False,
  // None, or a quoted string of printable characters without quotes or backslashes inside.
  static bool is_python_literal(const std::string& v) {
    if (v.empty() || v.size() > kMaxValue) return false;
    if (v == "True" || v == "False" || v == "None") return true;
    if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front()) {
      for (size_t i = 1; i + 1 < v.size(); ++i)
        if (v[i] == '\'' || v[i] == '"' || v[i] == '\\' || !std::isprint(static_cast<unsigned char>(v[i])))
          return false;
      return true;
    }
    size_t digits = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      const char ch = v[i];
      if (std::isdigit(static_cast<unsigned char>(ch)))
        ++digits;
      else if (!(ch == '.' || ch == 'e' || ch == 'E' ||
                 ((ch == '-' || ch == '+') && (i == 0 || v[i - 1] == 'e' || v[i - 1] == 'E'))))
        return false;
    }
    return digits > 0;
  }
};

}  // namespace tsrepro
