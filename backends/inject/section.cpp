// The inject test backend's section of the reproducers (backends/inject/repro.py, repro.cpp.in):
// the fault stated in a few lines (raise, abort, segfault, hang) or, for faults that edit the
// graph, the interpreter on the edited graph or model (its EditedGraph, which the writers hold
// beside the case's), as backends/inject/backend.cpp behaves.

#include "backends/inject/inject.h"
#include "repro/backend_section.h"
#include "repro/reproducer_case.h"

namespace tsrepro {
namespace {

// The lines a section keeps (raises, abort, segfault, hang, returns) and the RuntimeError message
// where it raises, as the inject backend behaves.
struct FaultLines {
  TemplateFlags flags;
  std::string message;
  bool runs_edited_graph = false;  // accuracy and backward faults: the graph with the fault's edit
};

FaultLines fault_lines(const InjectPlan& plan) {
  FaultLines section;
  const bool fires = plan.triggered;
  // As backends/inject/backend.cpp: a segfault that returns (SIGSEGV ignored) runs the graph.
  // The faults that edit the graph run it: the forward returns, what is wrong shows later.
  section.runs_edited_graph = fires && (plan.fault == "accuracy" || plan.fault == "flaky-accuracy" ||
                                        plan.fault == "backward-accuracy" || plan.fault == "backward-error");
  if (!fires || section.runs_edited_graph || plan.fault == "segfault") section.flags.insert(flag::returns);
  // It runs a graph that draws random numbers: kRunSeed first.
  if (section.flags.count(flag::returns) && random_number_flags(*plan.graph).count(flag::random))
    section.flags.insert(flag::seeded);
  if (fires && plan.fault == "backward-error") section.flags.insert(flag::backward_error);
  // flaky-accuracy: repro.py's runs 1, 3, ... are healthy (TSREPRO_REPRO_RUN, its repeated
  // runs); repro.cpp runs once, as the first run does.
  if (fires && plan.fault == "flaky-accuracy") section.flags.insert(flag::flaky);
  if (fires && (plan.fault == "compile-error" || plan.fault == "runtime-error")) {
    section.flags.insert(flag::raises);
    section.message = inject_error_message(plan.fault, plan.op_text);
  }
  if (fires && (plan.fault == "abort" || plan.fault == "segfault" || plan.fault == "hang"))
    section.flags.insert(TemplateFlag::named(plan.fault));
  return section;
}

std::optional<EditedGraph> inject_edited_graph(const Case& c, const std::string& spec) {
  const InjectPlan plan = plan_inject(spec, *c.graph);
  if (!fault_lines(plan).runs_edited_graph) return std::nullopt;
  return EditedGraph{plan.graph, "with the injected fault at " + plan.op_text.substr(0, plan.op_text.find('+')) + ": " +
                                     inject_edit_text(plan.fault)};
}

SectionParts inject_section(const SectionRequest& request) {
  const InjectPlan plan = plan_inject(request.spec, *request.c.graph);
  const FaultLines fault = fault_lines(plan);
  SectionParts parts;
  parts.flags = fault.flags;
  // Where it returns, it runs the graph (or the model) in the interpreter, as the form says.
  if (parts.flags.count(flag::returns) && (request.module_form || request.empty_inputs)) {
    parts.flags.erase(flag::returns);
    parts.flags.insert(request.module_form ? flag::returns_module : flag::returns_empty_inputs);
  }
  parts.calls_interpreted = parts.flags.count(flag::returns_module) > 0;
  for (TemplateFlag needs_header : {flag::abort, flag::segfault})  // repro.cpp: <cstdlib>, <csignal>
    if (parts.flags.count(needs_header)) parts.program_flags.insert(needs_header);
  for (TemplateFlag calls_os : {flag::abort, flag::segfault, flag::flaky})  // repro.py: os.abort, os.kill, os.environ
    if (parts.flags.count(calls_os)) parts.program_flags.insert(flag::os);
  const Dialect& d = request.dialect;
  parts.values = {{"SPEC", d.comment_text(request.spec)},
                  {"OPS", d.comment_text(plan.op_text)},
                  {"MESSAGE", d.string_literal(fault.message)},
                  {"INJECTED", fault.runs_edited_graph ? d.edited_graph : d.graph},
                  {"INJECTED_MODEL", fault.runs_edited_graph ? d.edited_model : d.model}};
  return parts;
}

}  // namespace

extern const ReproBackend inject_repro{/*profiles=*/false, /*freezes=*/false, inject_section,
                                       /*receives_eager_module=*/nullptr, inject_edited_graph};

}  // namespace tsrepro
