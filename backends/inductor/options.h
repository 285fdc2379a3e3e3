#pragma once
// inductor's options (--backend-opt), read once for the runner (backend.cpp), the writers
// (section.cpp) and aoti, which compiles with the same config:
//   mode=default|reduce-overhead|max-autotune|max-autotune-no-cudagraphs, dynamic=auto|0|1
//     torch.compile's arguments;
//   freezing=0|1          torch._inductor.config.freezing;
//   config=KEY=VALUE[;KEY=VALUE...]
//     any torch._inductor.config keys, each VALUE a Python literal (1, 0.5, True, None, 'text').
// The compile server (backends/pt2_compile_server.py) gets them as server_options(): the config
// as "config.KEY" entries holding the literal's text, which it reads with ast.literal_eval.

#include <algorithm>
#include <cctype>
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

  static InductorOptions from(const BackendOptions& options) {
    InductorOptions o;
    o.mode = option_choice(options, "mode", {"default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs"},
                           "default");
    o.dynamic = option_choice(options, "dynamic", {"auto", "0", "1"}, "auto");
    if (options.count("freezing")) o.config.emplace_back("freezing", option_flag(options, "freezing", false) ? "True" : "False");
    const auto config = options.find("config");
    if (config != options.end()) o.add_config(config->second);
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
    return out;
  }

 private:
  void add_config(const std::string& text) {
    size_t start = 0;
    while (start < text.size()) {
      const size_t end = std::min(text.find(';', start), text.size());
      const std::string item = text.substr(start, end - start);
      start = end + 1;
      if (item.empty()) continue;
      const size_t eq = item.find('=');
      if (eq == std::string::npos || eq == 0 || !is_python_literal(item.substr(eq + 1)))
        throw UserError("--backend-opt config=" + text + ": '" + item +
                        "' is not KEY=VALUE with VALUE a Python literal (1, 0.5, True, None, 'text')");
      config.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    }
  }

  // What ast.literal_eval reads and a reproducer can write as it is: a number, True, False,
  // None, or a quoted string without quotes or backslashes inside.
  static bool is_python_literal(const std::string& v) {
    if (v == "True" || v == "False" || v == "None") return true;
    if (v.size() >= 2 && (v.front() == '\'' || v.front() == '"') && v.back() == v.front())
      return v.find_first_of("'\"\\", 1) == v.size() - 1;
    if (v.empty()) return false;
    size_t digits = 0;
    for (size_t i = 0; i < v.size(); ++i) {
      const char ch = v[i];
      if (std::isdigit(static_cast<unsigned char>(ch))) ++digits;
      else if (!(ch == '.' || ch == 'e' || ch == 'E' || ((ch == '-' || ch == '+') && (i == 0 || v[i - 1] == 'e' || v[i - 1] == 'E'))))
        return false;
    }
    return digits > 0;
  }
};

}  // namespace tsrepro
