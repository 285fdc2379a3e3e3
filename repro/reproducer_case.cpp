#include "repro/reproducer_case.h"

#include <torch/version.h>

#include <cmath>
#include <sstream>

#include "backends/case_module.h"
#include "repro/backend_section.h"
#include "repro/describe.h"
#include "runner/case/constant_inputs.h"
#include "runner/case/inputs.h"
#include "tsrepro/error.h"

namespace tsrepro {
std::shared_ptr<torch::jit::Graph> reproducer_graph(const Case& c, const ReproSettings& settings) {
  if (settings.failure.run.device == "cpu") return c.graph;
  auto graph = c.graph->copy();
  graph_constants_to_device(*graph, c10::Device(settings.failure.run.device));
  return graph;
}

std::string reproducer_graph_ir(const Case& c, const ReproSettings& settings) {
  return graph_to_ir(*reproducer_graph(c, settings));
}

namespace {

std::optional<std::string> case_module_archive(const Case& c, const ReproSettings& settings) {
  if (!repro_backend(settings.failure.run.ref).freezes && !repro_backend(settings.failure.run.backend).freezes)
    return std::nullopt;
  BackendInput input;
  input.graph = c.graph;
  for (const InputSpec& spec : c.inputs) input.lifted.push_back(spec.lifted);
  bool packed = false;
  std::ostringstream archive;
  module_of_case(input, reproducer_input_values(c, settings), packed).save(archive);
  return archive.str();
}

// The module form in `modules`, or the reason the IR form stays in its ir_form_reason.
void choose_module_form(const Case& c, const ReproSettings& settings, ReproModules& modules) {
  // The profiling executor keeps its state in a compiled forward, which every instance of one
  // scripted class shares: a reference and a backend that both profile need two graphs.
  if (repro_backend(settings.failure.run.ref).profiles && repro_backend(settings.failure.run.backend).profiles) {
    modules.ir_form_reason = "the reference and the backend both run the profiling executor, which one class shares";
    return;
  }
  if (settings.failure.run.backward) {
    modules.ir_form_reason = "--backward compares the gradients of the lifted inputs, which IR keeps as inputs";
    return;
  }
  // The profiling executor sees the model's tensor constants as constants (constant_inputs.h);
  // source can hold a tensor only as an attribute, which the executor reads as an input.
  const bool profiles =
      repro_backend(settings.failure.run.ref).profiles || repro_backend(settings.failure.run.backend).profiles;
  if (profiles && !used_constant_inputs(c).empty()) {
    modules.ir_form_reason =
        "the profiling executor sees the model's tensor constants as constants, which source "
        "can only hold as attributes";
    return;
  }
  std::vector<bool> lifted;
  for (const InputSpec& spec : c.inputs) lifted.push_back(spec.lifted);
  const std::vector<c10::IValue> values = reproducer_input_values(c, settings);
  modules.repro = module_form(*reproducer_graph(c, settings), lifted, values);
  modules.ir_form_reason = modules.repro.fallback;
  if (modules.edited && modules.ir_form_reason.empty()) {
    modules.edited_module = module_form(*modules.edited->graph, lifted, values);
    modules.ir_form_reason = modules.edited_module->fallback;
  }
}

}  // namespace

ReproModules repro_modules(const Case& c, const ReproSettings& settings) {
  ReproModules modules;
  const ReproBackend& backend = repro_backend(settings.failure.run.backend);
  if (backend.receives_eager_module && backend.receives_eager_module(settings.failure.run.backend_options)) {
    std::vector<bool> lifted;
    for (const InputSpec& spec : c.inputs) lifted.push_back(spec.lifted);
    EagerModule eager = eager_module(*reproducer_graph(c, settings), lifted);
    if (eager.refused.empty()) modules.eager = std::move(eager);
  }
  if (backend.edited_graph) modules.edited = backend.edited_graph(c, settings.failure.run.backend);
  if (modules.edited && settings.failure.run.device != "cpu") {
    modules.edited->graph = modules.edited->graph->copy();
    graph_constants_to_device(*modules.edited->graph, c10::Device(settings.failure.run.device));
  }
  choose_module_form(c, settings, modules);
  if (!modules.ir_form_reason.empty()) modules.case_module = case_module_archive(c, settings);
  return modules;
}

std::vector<std::string> used_constant_inputs(const Case& c) {
  std::vector<std::string> used;
  for (size_t i : constant_input_indices(c.inputs))
    if (c.graph->inputs().at(i)->hasUses()) used.push_back(std::to_string(i));
  return used;
}

std::vector<c10::IValue> reproducer_input_values(const Case& c, const ReproSettings& settings) {
  return uses_fake_inputs(c, settings) ? make_fake_inputs(c.inputs, settings.failure.run.seed) : *c.values;
}

bool uses_fake_inputs(const Case& c, const ReproSettings& settings) {
  return settings.failure.run.fake_inputs || !c.values.has_value();
}

std::vector<std::string> gradient_input_indices(const Case& c) {
  const std::vector<bool> with_grad = gradient_inputs(c.inputs);
  std::vector<std::string> indices;
  for (size_t i = 0; i < with_grad.size(); ++i)
    if (with_grad[i] && c.inputs[i].kind == "tensor") indices.push_back(std::to_string(i));  // as with_grad_leaves
  return indices;
}

std::string node_origins_text(const Case& c) {
  if (!c.node_origins) return "";
  const std::vector<NodeOrigin> origins = origins_in_graph(*c.graph, *c.node_origins);
  std::string text;
  for (size_t i = 0; i < origins.size() && i < kListedNodeOrigins; ++i) {
    const NodeOrigin& o = origins[i];
    text += (i ? "; " : "") + o.kind;
    if (!o.file.empty()) text += " at " + o.file + ":" + std::to_string(o.line);
    text +=
        " (" + (o.module_path.empty() ? std::string() : o.module_path + ", ") + "node " + std::to_string(o.index) + ")";
  }
  if (origins.size() > kListedNodeOrigins)
    text += "; and " + std::to_string(origins.size() - kListedNodeOrigins) + " more (graph.ir's comments)";
  return text;
}

void add_common_values(const Case& c, const ReproSettings& s, std::string (*comment)(std::string_view),
                       std::string (*literal)(std::string_view), TemplateValues& values, TemplateFlags& flags) {
  values["TITLE"] = comment(issue_title(c, s));
  values["VERSION"] = comment(TSREPRO_VERSION);
  values["LIBTORCH"] = comment(TORCH_VERSION);
  values["CPU"] = comment(cpu_model_name());
  values["EXPECTED_TEXT"] = comment(expected_failure_text(s));
  values["COMMAND"] = comment(s.command_line);
  if (!s.command_line.empty()) flags.insert(flag::command);
  values["NODE_ORIGINS"] = comment(node_origins_text(c));
  if (!values["NODE_ORIGINS"].empty()) flags.insert(flag::origins);
  // Where in the compiler, as `tsrepro explain --passes` found it on the minified case (issue 54).
  const nlohmann::json passes = c.provenance.value("passes", nlohmann::json::object());
  if (passes.contains("finding") && passes["finding"].is_string()) {
    values["BISECTED"] = comment(passes["finding"].get<std::string>());
    flags.insert(flag::bisected);
  }
  if (passes.contains("runs_right_with") && passes["runs_right_with"].is_object() &&
      !passes["runs_right_with"].empty()) {
    std::string settings;  // CompilerBisector's own variables, which a plain run of repro.py reads
    for (const auto& [name, value] : passes["runs_right_with"].items())
      settings += name + "=" + value.get<std::string>() + " ";
    values["RUNS_RIGHT_WITH"] = comment(settings.substr(0, settings.size() - 1));
    flags.insert(flag::runs_right_with);
  }
  values["EXPECTED"] = literal(s.failure.status_text());
  values["EXIT_ON_EXCEPTION"] = s.failure.status == Status::Exception ? "1" : "0";
  values["DEVICE"] = literal(s.failure.run.device);
  if (s.failure.run.device != "cpu") flags.insert(flag::cuda);
  // The backend's call in a repro compiles too: where tsrepro bounds the compile on its own, the
  // alarm allows for both bounds.
  double backend_seconds = s.failure.run.timeout_seconds;
  try {
    if (make_backend(s.failure.run.backend, s.failure.run.backend_options)->compiles_ahead_of_time())
      backend_seconds += s.failure.run.compile_timeout_seconds;
  } catch (const std::exception&) {  // a backend this build lacks: repro.py says so when it runs
  }
  values["TIMEOUT_S"] = std::to_string(static_cast<int64_t>(std::ceil(backend_seconds)));
  values["RUN_SEED"] = std::to_string(kRunSeed);
  // A flaky failure: repro.py runs it run.repeat times and reports the rate.
  if (s.failure.run.repeat > 1) flags.insert(flag::repeat);
  values["REPEAT"] = std::to_string(s.failure.run.repeat);
  values["RUNS"] = std::to_string(s.failure.runs);
  values["FAILED_RUNS"] = std::to_string(s.failure.failed_runs);
  flags.insert(random_number_flags(*c.graph));
}

namespace {

bool draws_random_numbers(const torch::jit::Block* block) {
  for (const torch::jit::Node* node : block->nodes()) {
    if (node->isNondeterministic()) return true;
    for (const torch::jit::Block* inner : node->blocks())
      if (draws_random_numbers(inner)) return true;
  }
  return false;
}

}  // namespace

TemplateFlags random_number_flags(const torch::jit::Graph& graph) {
  return draws_random_numbers(graph.block()) ? TemplateFlags{flag::random} : TemplateFlags{};
}

void append_section(std::string& source, const std::string& section, int separator) {
  const auto first = section.find_first_not_of('\n');
  if (first == std::string::npos) return;
  const auto last = section.find_last_not_of('\n');
  if (!source.empty()) source += std::string(separator, '\n');
  source += section.substr(first, last - first + 1) + "\n";
}

}  // namespace tsrepro
