// `tsrepro after CASE --backend B`: the C++ side of the Python shim (python/tsrepro). The
// shim saves the program's module and real inputs and imports them; this runs the imported graph
// once through the same TSREPRO_AFTER workflow a C++ program gets from tsrepro::compile, so both
// languages write the same cases, reproducers and minifier runs.

#include <iostream>

#include "cli/commands.h"
#include "repro/after/compile_case.h"
#include "tsrepro/error.h"

namespace tsrepro::cli {

int after_command(const AfterCliOptions& o) {
  const Case c = load_case(o.case_dir);
  if (!c.values)
    throw UserError(o.case_dir + ": has no real inputs (inputs.pt); the workflow needs the program's values");
  CompiledModule fn = compile_case(c, o.backend, parse_backend_options(o.backend_opts), o.id);
  try {
    fn(*c.values);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    std::cerr << "tsrepro after: " << o.backend << " failed: " << what.substr(0, what.find('\n')) << "\n";
    return 1;
  }
  return fn.failures_reported() > 0 ? 1 : 0;
}

}  // namespace tsrepro::cli
