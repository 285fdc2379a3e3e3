// The registry of backends, made from backends/backends.def.

#include "backends/builtin.h"
#include "runner/word_lists.h"
#include "tsrepro/error.h"

namespace tsrepro {

std::unique_ptr<PreparedGraph> Backend::prepare_module(const torch::jit::Module&, const std::vector<c10::IValue>&) {
  throw UserError("backend " + name() + " has no public calls on a saved module to judge it by");
}

const std::vector<BackendInfo>& backend_registry() {
  static const std::vector<BackendInfo> registry = {
#define TSREPRO_BACKEND(id, spelling, option_keys, description, issue_label, under, roles) \
  {#id, spelling, description, comma_separated(option_keys), make_##id##_backend, issue_label, under},
#include "backends/backends.def"
#undef TSREPRO_BACKEND
  };
  return registry;
}

std::string known_backends_text() {
  std::vector<std::string> spellings;
  for (const BackendInfo& info : backend_registry()) spellings.push_back(info.spelling);
  return joined(spellings, ", ");
}

const BackendInfo* find_backend(const std::string& spec) {
  const std::string family = spec.substr(0, spec.find(':'));
  for (const BackendInfo& info : backend_registry())
    if (info.name == family) return &info;
  return nullptr;
}

std::unique_ptr<Backend> make_backend(const std::string& spec, const BackendOptions& options) {
  const BackendInfo* info = find_backend(spec);
  if (!info) throw UserError("--backend " + spec + ": unknown backend (known: " + known_backends_text() + ")");
  // Only a backend whose spelling has a ':' part (inject:<fault>@<op>) reads it: `nnc:x` is no nnc.
  if (spec.find(':') != std::string::npos && info->spelling.find(':') == std::string::npos)
    throw UserError("--backend " + spec + ": " + info->name +
                    " takes nothing after ':' (its options go in --backend-opt)");
  for (const auto& [key, value] : options) {
    if (std::find(info->option_keys.begin(), info->option_keys.end(), key) != info->option_keys.end()) continue;
    throw UserError(
        "--backend-opt " + key + ": backend '" + info->name + "' has no such option" +
        (info->option_keys.empty() ? " (it takes none)" : " (it takes: " + joined(info->option_keys, ", ") + ")"));
  }
  return info->make(spec, options);
}

void check_backend(const std::string& spec, const BackendOptions& options) {
  make_backend(spec, options)->check_options_with_compiler();
}

}  // namespace tsrepro
