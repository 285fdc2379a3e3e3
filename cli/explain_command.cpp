// `tsrepro explain CASE`: which autograd node differentiates each forward node (runner/explain/autograd_table.h)
// and, with --backend, where a backward-phase failure starts (minifier/gradient_attribution.h).
// `tsrepro explain --passes CASE`: after which of the backend's passes the case fails
// (runner/explain/pass_bisect.h), the backend the case recorded its failure under unless --backend.
// It runs the reference and the backend in this process: a case that crashes is not one to explain.

#include <cmath>
#include <iostream>
#include <sstream>

#include "cli/command.h"
#include "minifier/gradient_attribution.h"
#include "runner/explain/autograd_table.h"
#include "runner/explain/pass_bisect.h"
#include "runner/exec/evaluate.h"
#include "runner/case/inputs.h"
#include "tsrepro/case.h"
#include "tsrepro/run_spec.h"

namespace tsrepro::cli {
namespace {

constexpr size_t kListedGradients = 8;  // disagreeing gradients listed besides the culprit's

struct ExplainOptions {
  std::string case_dir;
  std::string backend;                    // empty: the reference alone
  std::vector<std::string> backend_opts;  // --backend-opt key=value
  bool json = false;
  bool passes = false;
  bool fake_inputs = false;
  uint64_t seed = 0;
};

struct ExplainedGradients {
  Verdict whole;                                   // the case under the backend, gradients compared
  std::optional<GradientAttribution> attribution;  // when the failure is in the backward pass
};

// Every probe is judged as `tsrepro run --backward` would judge it, in this process.
ExplainedGradients explain_gradients(Case c, const std::vector<c10::IValue>& inputs, RunSpec spec) {
  spec.backward = true;
  c.values = inputs;
  Evaluator evaluator;
  auto verdict_of = [&](const Case& candidate) -> std::optional<Verdict> {
    return evaluator.evaluate_values(eval_request(candidate, spec, ""), *candidate.values, [](Phase) {});
  };
  ExplainedGradients explained{*verdict_of(c), std::nullopt};
  const Verdict& whole = explained.whole;
  if (!whole.failed() || whole.phase != Phase::Backward) return explained;
  const ReferenceValues refs = compute_reference_values(c);
  const GradientProbes probes{verdict_of, [&](const Verdict& v) {
                                return v.status == whole.status && v.phase == Phase::Backward &&
                                       (v.status == Status::Accuracy || v.signature == whole.signature);
                              }};
  explained.attribution = attribute_backward_failure(c, whole, refs, probes);
  return explained;
}

nlohmann::json gradient_to_json(const ValueGradient& g) {
  return {{"value", g.value},
          {"reader", g.reader ? nlohmann::json(*g.reader) : nlohmann::json(nullptr)},
          {"ok", g.diff.ok},
          {"max_abs", std::isfinite(g.diff.max_abs) ? nlohmann::json(g.diff.max_abs) : nlohmann::json(nullptr)},
          {"max_rel", std::isfinite(g.diff.max_rel) ? nlohmann::json(g.diff.max_rel) : nlohmann::json(nullptr)}};
}

nlohmann::json explained_to_json(const ExplainedGradients& e) {
  nlohmann::json j = {{"verdict", verdict_to_json(e.whole)}, {"culprit", nullptr}};
  if (!e.attribution) return j;
  const GradientAttribution& a = *e.attribution;
  nlohmann::json gradients = nlohmann::json::array();
  for (const ValueGradient& g : a.gradients) gradients.push_back(gradient_to_json(g));
  j["culprit"] = a.culprit ? nlohmann::json(*a.culprit) : nlohmann::json(nullptr);
  j["method"] = a.method;
  j["runs"] = a.runs;
  j["gradients"] = gradients;
  j["note"] = a.note;
  return j;
}

std::string explained_text(const ExplainedGradients& e, const AutogradTable& table) {
  std::ostringstream out;
  out << "\nGradients under " << table.backend << " against the reference: ";
  if (!e.whole.failed()) return out.str() + "they agree (and so do the outputs).\n";
  if (e.whole.phase != Phase::Backward)
    return out.str() + "not compared: the backend fails before the backward pass (" +
           std::string(phase_name(e.whole.phase)) + ": " + e.whole.message + ").\n";
  const GradientAttribution& a = *e.attribution;
  out << e.whole.message << "\n";
  if (!a.culprit) return out.str() + "No culprit found: " + a.note + ".\n";
  const ForwardRow& row = table.forward.at(*a.culprit);
  out << "Culprit: node " << row.position << ", " << node_text(row);
  if (row.origin && !row.origin->file.empty()) out << " at " << row.origin->file << ":" << row.origin->line;
  if (row.origin && !row.origin->module_path.empty()) out << " (" << row.origin->module_path << ")";
  const std::string backward = row.backward.empty() ? "its backward" : row.backward;
  if (e.whole.status == Status::Accuracy)
    out << ": its outputs' gradients agree with the reference, the ones " << backward << " hands to its inputs do not";
  else
    out << ": " << backward << " fails, the graph from the next node on does not";
  out << " (" << a.method << ", " << a.runs << " run" << (a.runs == 1 ? "" : "s") << ").\n";
  // The culprit's own gradients, then every other one that disagrees (the first few).
  std::vector<const ValueGradient*> shown;
  for (const ValueGradient& g : a.gradients)
    if (g.reader == a.culprit) shown.push_back(&g);
  size_t others = 0;
  for (const ValueGradient& g : a.gradients)
    if (!g.diff.ok && g.reader != a.culprit && others++ < kListedGradients) shown.push_back(&g);
  if (!shown.empty()) out << "Value|Read by|Gradient\n";
  for (const ValueGradient* g : shown)
    out << "%" << g->value << "|" << (g->reader ? node_text(table.forward.at(*g->reader)) : "-") << "|"
        << (g->diff.ok ? "agrees"
                       : "differs: max_abs " + std::to_string(g->diff.max_abs) + ", max_rel " +
                             std::to_string(g->diff.max_rel))
        << "\n";
  if (others > kListedGradients) out << "(" << others - kListedGradients << " more that differ: --json lists all)\n";
  return out.str();
}

// The case's failure bisected over its backend's passes. Exit 0 where the search ran.
int explain_passes(const ExplainOptions& o, const Case& c, const std::vector<c10::IValue>& inputs) {
  RunSpec spec = c.expected ? c.expected->run : RunSpec{};
  if (!o.backend.empty()) {
    spec.backend = o.backend;
    spec.backend_options = parse_backend_options(o.backend_opts);
  }
  if (spec.backend.empty() || spec.backend == spec.ref)
    throw UserError(o.case_dir + ": no failure recorded under a backend; name one with --backend");
  spec.validate();
  const PassFinding f = find_failing_pass(c, inputs, spec);
  if (o.json) {
    std::cout << pass_finding_to_json(f).dump() << "\n";
    return 0;
  }
  std::cout << "Under " << spec.backend << ": " << (f.whole.failed() ? f.whole.signature : "passes") << "\n";
  for (size_t k = 0; k < f.prefixes.size(); ++k) {
    if (f.stage.empty())
      std::cout << "  after " << k + 1 << " pass" << (k ? "es" : "") << " (" << f.passes[k] << ")";
    else
      std::cout << "  bisect=" << f.passes[k];  // CompilerBisector's switch, as --backend-opt takes it
    std::cout << ": " << (f.prefixes[k].failed() ? f.prefixes[k].signature : "right") << "\n";
  }
  std::cout << "Bisected to: " << f.finding << " (" << f.runs << " runs)\n";
  if (!f.runs_right_with.empty()) {
    std::cout << "Runs right with:";
    for (const auto& [name, value] : f.runs_right_with) std::cout << " " << name << "=" << value;
    std::cout << " (PyTorch's CompilerBisector; set them for repro.py)\n";
  }
  return 0;
}

// The forward nodes with the autograd nodes that differentiate them, and the backward graph in
// the order the engine runs it. Exit 0.
int explain_command(const ExplainOptions& o) {
  const Case c = load_case(o.case_dir);
  const std::vector<c10::IValue> inputs = c.values && !o.fake_inputs ? *c.values : make_fake_inputs(c.inputs, o.seed);
  if (o.passes) return explain_passes(o, c, inputs);
  AutogradTable table = autograd_table(c, inputs);
  std::optional<ExplainedGradients> gradients;
  if (!o.backend.empty()) {
    RunSpec spec;
    spec.backend = o.backend;
    spec.backend_options = parse_backend_options(o.backend_opts);
    spec.validate();  // an unknown backend or option is named before anything runs
    add_backend_units(table, c, inputs, spec.backend, spec.backend_options);
    gradients = explain_gradients(c, inputs, spec);
  }
  if (o.json) {
    nlohmann::json j = autograd_table_to_json(table);
    if (gradients) j["attribution"] = explained_to_json(*gradients);
    std::cout << j.dump() << "\n";
  } else {
    std::cout << autograd_table_text(table) << (gradients ? explained_text(*gradients, table) : "");
  }
  return 0;
}

class ExplainCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app, Invocation& invocation) override {
    auto* cmd = app.add_subcommand(
        "explain",
        "list which autograd node (by sequence number) differentiates each node of a case, and the backward order");
    cmd->add_option("case", options_.case_dir, "a case directory")->required();
    cmd->add_option("--backend", options_.backend,
                    "also say which of this backend's differentiable subgraphs (and fusion groups) covers each node");
    cmd->add_option("--backend-opt", options_.backend_opts, "backend option key=value (repeatable)");
    cmd->add_flag("--json", options_.json, "print the tables as one JSON object");
    cmd->add_flag("--passes", options_.passes,
                  "say after which of the backend's passes the case fails as it does (the case's recorded "
                  "backend unless --backend; under PyTorch 2, by PyTorch's CompilerBisector: the stage, the "
                  "subsystem and its application)");
    cmd->add_flag("--fake-inputs", options_.fake_inputs, "use seeded fake inputs of the recorded shapes");
    cmd->add_option("--seed", options_.seed, "seed of the fake inputs");
    add_load_library_flag(*cmd, invocation.libraries);
    return cmd;
  }
  std::string case_dir() const override { return options_.case_dir; }
  int run(const Invocation&) override { return explain_command(options_); }

 private:
  ExplainOptions options_;
};

}  // namespace

std::unique_ptr<Command> make_explain_command() { return std::make_unique<ExplainCommand>(); }

}  // namespace tsrepro::cli
