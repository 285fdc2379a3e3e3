#pragma once
// The inject test backend's part of the reproducers besides its section function: what its fault
// makes a reproducer do, which the writers also need around the section (the injected model, the
// backward-error op). Derived from the plan (backends/inject/inject.h), as the backend behaves.

#include <string>

#include "backends/inject/inject.h"
#include "repro/template_fill.h"

namespace tsrepro {

// The lines a backends/inject section keeps (raises, abort, segfault, hang, returns) and the
// RuntimeError message where it raises, as the inject backend behaves.
struct InjectSection {
  TemplateFlags flags;
  std::string message;
  bool runs_injected_graph = false;  // accuracy and backward faults: the graph with the fault's edit
};
InjectSection inject_section_parts(const InjectPlan& plan);

}  // namespace tsrepro
