// tsrepro::compile and the calls of the compiled module: the backend's run, and around it, when
// TSREPRO_AFTER asks, the dumps of the graph or of the fusion groups that failed.

#include <atomic>
#include <set>

#include <spdlog/spdlog.h>
#include <torch/script.h>

#include "repro/after/accuracy_check.h"
#include "repro/after/compile_case.h"
#include "repro/after/dump.h"
#include "repro/after/fusion_groups.h"
#include "backends/builtin.h"
#include "runner/case/constant_inputs.h"
#include "runner/exec/evaluate.h"
#include "runner/case/inputs.h"
#include "tsrepro/node_origin.h"
#include "runner/file_util.h"
#include "runner/import/import.h"
#include "tsrepro/after.h"
#include "tsrepro/compare.h"

namespace tsrepro {

struct CompiledModule::State {
  AfterSettings settings;
  std::string backend_spec;
  BackendOptions options;
  std::unique_ptr<Backend> backend;
  ModuleGraph module;
  // What the backend gets: the module's graph with its tensor constants constants again
  // (runner/case/constant_inputs.h), and the values of the inputs it keeps.
  std::vector<InputSpec> specs;  // per graph input, as a case holds them (lifted, lifted_from)
  BackendInput backend_input(const std::vector<c10::IValue>& values) const;
  std::vector<c10::IValue> backend_values(std::vector<c10::IValue> values) const;
  std::unique_ptr<PreparedGraph> prepared;
  int id = 0;  // this process's n-th compiled module: names its subjects
  bool pre_run_dump_announced = false;
  bool groups_checked = false;
  size_t failures = 0;
  std::set<std::string> failed_subjects;  // their directories are reports: never swept
  // compile_case: the case's origins table. Its graph, read back from graph.ir, has node numbers
  // but no source ranges left to read the lines from.
  std::shared_ptr<const NodeOrigins> case_origins;
};

BackendInput CompiledModule::State::backend_input(const std::vector<c10::IValue>& values) const {
  BackendInput input{module.graph->copy(), {}};
  std::vector<InputSpec> kept = specs;
  std::vector<c10::IValue> folded = values;
  // Copies (every input counts as written): the constants outlive this call's values.
  fold_constant_inputs(*input.graph, kept, folded, std::vector<bool>(specs.size(), true));
  for (const InputSpec& spec : kept) input.lifted.push_back(spec.lifted);
  return input;
}

std::vector<c10::IValue> CompiledModule::State::backend_values(std::vector<c10::IValue> values) const {
  const std::vector<size_t> constants = constant_input_indices(specs);
  for (auto it = constants.rbegin(); it != constants.rend(); ++it)
    values.erase(values.begin() + static_cast<std::ptrdiff_t>(*it));
  return values;
}

namespace {

// A level-3 dump written before running, once its subject ran fine: it was only there in case
// of a crash, and a run directory should hold only what failed.
void sweep_pre_run_dump(const CompiledModule::State& s, const std::string& subject) {
  if (s.settings.level < 3 || s.failed_subjects.count(subject)) return;
  remove_tree(run_directory(s.settings.dir) + "/" + subject);
}

std::vector<c10::IValue> detached_copies(const std::vector<c10::IValue>& values) {
  std::vector<c10::IValue> copies = clone_values(values);
  for (c10::IValue& v : copies)
    if (v.isTensor()) v = v.toTensor().detach();
  return copies;
}

c10::IValue as_forward_returns(std::vector<c10::IValue> outputs) {
  if (outputs.size() == 1) return outputs[0];
  return c10::ivalue::Tuple::create(std::move(outputs));
}

// Writes what the level asks for a failed subject, logs where and what to run next, and at
// level 3+ minifies. Never throws: the program's own failure must still reach it.
void report_failure(CompiledModule::State& s, const Subject& subject, const Verdict& failure) {
  ++s.failures;
  s.failed_subjects.insert(subject.name);
  try {
    const std::string dir = write_subject(run_directory(s.settings.dir), subject, failure, s.settings.level);
    spdlog::logger& log = after_log();
    log.warn("{} failed under {}: {} {}", subject.name, subject.run.backend, status_name(failure.status),
             failure.signature);
    log.warn("wrote {} (case, repro.py, repro.cpp)", dir);
    log.warn("reproduce: tsrepro run {} --backend {}    or    /usr/bin/python3 {}/repro.py", dir, subject.run.backend,
             dir);
    if (s.settings.level == 2) log.warn("minify:    sh {}/minify.sh", dir);
    if (s.settings.level == 1) log.warn("minify:    {}", minify_command(dir, subject, failure));
    if (s.settings.level >= 3) run_minifier(dir, subject, failure);
  } catch (const std::exception& e) {
    after_log().error("could not write the case for {}: {}", subject.name, e.what());
  }
}

Subject subject_for(const CompiledModule::State& s, const std::string& name, std::shared_ptr<torch::jit::Graph> graph,
                    const std::vector<c10::IValue>& values) {
  Subject subject;
  subject.name = name;
  subject.run.backend = s.backend_spec;
  subject.run.backend_options = s.options;
  const bool whole_graph = graph == s.module.graph;
  // Numbered on a copy: the program's own graph never carries tsrepro's attributes. A graph from
  // a running program (a fusion group's too) still has its nodes' source ranges and inlined call
  // stacks, so the case says where its nodes came from as an imported one does.
  subject.c.graph = graph->copy();
  subject.c.node_origins = renumber_origins(*subject.c.graph, s.case_origins.get());
  const size_t user_inputs = values.size() - s.module.trailing_specs.size();
  for (size_t i = 0; i < values.size(); ++i) {
    if (whole_graph && i >= user_inputs) {
      subject.c.inputs.push_back(s.module.trailing_specs[i - user_inputs]);
    } else {
      subject.c.inputs.push_back(spec_from_value(subject.c.graph->inputs()[i]->debugName(), values[i]));
    }
  }
  subject.c.values = values;
  return subject;
}

// TSREPRO_AFTER=fusion: every group the backend formed, checked once, on the first call's values.
void check_fusion_groups(CompiledModule::State& s, const std::vector<c10::IValue>& values) {
  s.groups_checked = true;
  const std::shared_ptr<torch::jit::Graph> optimized = s.prepared->optimized_graph();
  if (!optimized) {
    after_log().warn("TSREPRO_AFTER=fusion: backend {} has no optimized graph to look into; nothing checked",
                     s.backend_spec);
    return;
  }
  std::vector<FusionGroup> groups;
  try {
    groups = fusion_groups_with_inputs(optimized, values);
  } catch (const std::exception& e) {
    after_log().error("TSREPRO_AFTER=fusion: could not record the fusion groups' inputs: {}", e.what());
    return;
  }
  after_log().info("TSREPRO_AFTER=fusion: {} fusion group(s) formed by {}", groups.size(), s.backend_spec);
  for (size_t g = 0; g < groups.size(); ++g) {
    const Subject subject =
        subject_for(s, subject_directory_name(s.id, static_cast<int>(g)), groups[g].subgraph, groups[g].inputs);
    if (s.settings.level >= 3) write_subject(run_directory(s.settings.dir), subject, std::nullopt, s.settings.level);
    std::optional<Verdict> failure;
    try {
      // The fusion stage is a comparison at every level: a group is judged by its outputs.
      failure = check_fusion_group(groups[g], /*compare_accuracy=*/true, CompareOptions{});
    } catch (const std::exception& e) {
      after_log().error("TSREPRO_AFTER=fusion: group {} could not be checked: {}", g, e.what());
      continue;
    }
    if (failure) {
      report_failure(s, subject, *failure);
    } else {
      after_log().info("{} ({} nodes) agrees with the interpreter", subject.name,
                       count_compute_nodes(*groups[g].subgraph));
      sweep_pre_run_dump(s, subject.name);
    }
  }
}

}  // namespace

CompiledModule::CompiledModule(std::shared_ptr<State> state) : state_(std::move(state)) {}

size_t CompiledModule::failures_reported() const { return state_->failures; }

namespace {

// `from_case`: a case, whose specs say which inputs were lifted (a freezing backend folds them)
// and which were tensor constants (every backend gets those back as constants); null for a
// module, whose lifted inputs are its trailing ones.
CompiledModule compiled_from(ModuleGraph graph, const std::string& backend, const BackendOptions& options, int id,
                             const Case* from_case = nullptr) {
  static std::atomic<int> compiled{0};
  auto s = std::make_shared<CompiledModule::State>();
  s->settings = AfterSettings::from_environment();
  s->backend_spec = backend;
  s->options = options;
  s->backend = make_backend(backend, options);
  s->module = std::move(graph);
  const size_t user_inputs = s->module.graph->inputs().size() - s->module.trailing_specs.size();
  s->specs.assign(user_inputs, InputSpec{});
  s->specs.insert(s->specs.end(), s->module.trailing_specs.begin(), s->module.trailing_specs.end());
  if (from_case) {
    for (size_t i = 0; i < from_case->inputs.size() && i < s->specs.size(); ++i) s->specs[i] = from_case->inputs[i];
    s->case_origins = from_case->node_origins;
  }
  s->id = id > 0 ? id : ++compiled;
  return CompiledModule(s);
}

}  // namespace

std::vector<c10::IValue> load_inputs(const std::string& path) { return read_input_values(path); }

CompiledModule compile(const torch::jit::Module& module, const std::string& backend, const BackendOptions& options,
                       const std::string& method) {
  return compiled_from(module_graph(module, method, "tsrepro::compile"), backend, options, 0);
}

CompiledModule compile_case(const Case& c, const std::string& backend, const BackendOptions& options, int id) {
  // Every input of a case is an input of the call; lifted ones keep their mark (ofi folds them).
  ModuleGraph graph;
  graph.graph = c.graph;
  return compiled_from(std::move(graph), backend, options, id, &c);
}

c10::IValue CompiledModule::operator()(std::vector<c10::IValue> inputs) {
  State& s = *state_;
  std::vector<c10::IValue> values = std::move(inputs);
  values.insert(values.end(), s.module.trailing_values.begin(), s.module.trailing_values.end());
  if (s.settings.stage == AfterSettings::Stage::Off) {
    if (!s.prepared) s.prepared = s.backend->prepare(s.backend_input(values), clone_values(s.backend_values(values)));
    return as_forward_returns(s.prepared->run(s.backend_values(std::move(values))));
  }

  // The values as they were before this call: the run may change them in place.
  const Subject whole = subject_for(s, subject_directory_name(s.id), s.module.graph, detached_copies(values));
  const bool graph_stage = s.settings.stage == AfterSettings::Stage::Graph;
  if (graph_stage && s.settings.level >= 3) {
    const std::string dir = write_subject(run_directory(s.settings.dir), whole, std::nullopt, s.settings.level);
    if (!s.pre_run_dump_announced)
      after_log().info("wrote {} before running (if the program crashes: tsrepro run {} --backend {})", dir, dir,
                       s.backend_spec);
    s.pre_run_dump_announced = true;
  }

  if (!s.prepared) {
    try {
      s.prepared = s.backend->prepare(s.backend_input(values), clone_values(s.backend_values(values)));
    } catch (...) {
      // No fusion group exists yet to blame: the whole graph is the subject, at either stage.
      report_failure(s, whole, verdict_for_current_exception(Phase::Compile));
      throw;
    }
  }
  if (!graph_stage && !s.groups_checked) check_fusion_groups(s, *whole.c.values);

  std::vector<c10::IValue> outputs;
  try {
    outputs = s.prepared->run(s.backend_values(std::move(values)));
  } catch (...) {
    if (graph_stage) report_failure(s, whole, verdict_for_current_exception(Phase::Run));
    throw;
  }
  if (graph_stage && s.settings.level >= 4) {
    if (std::optional<Verdict> failure = accuracy_failure(s.module.graph, *whole.c.values, outputs))
      report_failure(s, whole, *failure);
  }
  if (graph_stage) sweep_pre_run_dump(s, whole.name);
  return as_forward_returns(std::move(outputs));
}

}  // namespace tsrepro
