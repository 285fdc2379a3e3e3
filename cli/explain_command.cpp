// `tsrepro explain CASE`: which autograd node differentiates each forward node (runner/autograd_table.h).
// It runs the reference in this process: a case that crashes its reference is not one to explain.

#include <iostream>

#include "cli/commands.h"
#include "runner/autograd_table.h"
#include "runner/inputs.h"
#include "tsrepro/case.h"
#include "tsrepro/run_spec.h"

namespace tsrepro::cli {

int explain_command(const ExplainOptions& o) {
  const Case c = load_case(o.case_dir);
  const std::vector<c10::IValue> inputs = c.values && !o.fake_inputs ? *c.values : make_fake_inputs(c.inputs, o.seed);
  AutogradTable table = autograd_table(c, inputs);
  if (!o.backend.empty()) {
    RunSpec spec;
    spec.backend = o.backend;
    spec.backend_options = parse_backend_options(o.backend_opts);
    spec.validate();  // an unknown backend or option is named before anything runs
    add_backend_units(table, c, inputs, spec.backend, spec.backend_options);
  }
  if (o.json)
    std::cout << autograd_table_to_json(table).dump() << "\n";
  else
    std::cout << autograd_table_text(table);
  return 0;
}

}  // namespace tsrepro::cli
