// The inject test backend's section of the reproducers (backends/inject/repro.py, repro.cpp.in):
// the fault stated in a few lines (raise, abort, segfault, hang) or, for faults that edit the
// graph, the interpreter on the edited graph or model, as backends/inject/backend.cpp behaves.

#include "backends/inject/section.h"

#include "repro/backend_section.h"
#include "repro/reproducer_case.h"

namespace tsrepro {

InjectSection inject_section_parts(const InjectPlan& plan) {
  InjectSection section;
  const bool fires = plan.triggered;
  // As backends/inject/backend.cpp: a segfault that returns (SIGSEGV ignored) runs the graph.
  // The faults that edit the graph run it: the forward returns, what is wrong shows later.
  section.runs_injected_graph = fires && (plan.fault == "accuracy" || plan.fault == "flaky-accuracy" ||
                                          plan.fault == "backward-accuracy" || plan.fault == "backward-error");
  if (!fires || section.runs_injected_graph || plan.fault == "segfault") section.flags.insert(flag::returns);
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

namespace {

SectionParts inject_section(const SectionRequest& request) {
  const InjectPlan& plan = *request.plan;
  const InjectSection fault = inject_section_parts(plan);
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
  const Dialect& d = request.dialect;
  parts.values = {{"SPEC", d.comment_text(request.spec)},
                  {"OPS", d.comment_text(plan.op_text)},
                  {"MESSAGE", d.string_literal(fault.message)},
                  {"INJECTED", fault.runs_injected_graph ? d.injected_graph : d.graph},
                  {"INJECTED_MODEL", fault.runs_injected_graph ? d.injected_model : d.model}};
  return parts;
}

}  // namespace

extern const ReproBackend inject_repro{/*profiles=*/false, /*freezes=*/false, inject_section};

}  // namespace tsrepro
