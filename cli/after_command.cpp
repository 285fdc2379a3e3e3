// `tsrepro after CASE --backend B`: the C++ side of the Python shim (python/tsrepro). The
// shim saves the program's module and real inputs and imports them; this runs the imported graph
// once through the same TSREPRO_AFTER workflow a C++ program gets from tsrepro::compile, so both
// languages write the same cases, reproducers and minifier runs. What the shim would otherwise
// have to implement again it asks for here instead: the TSREPRO_* settings (--settings), its run
// directory (--claim-run-dir) and the run of a backend it cannot emulate (--outputs: the inject
// test backend's faults, exactly as backends/inject/backend.cpp makes them).

#include <iostream>

#include "cli/command.h"
#include "repro/after/compile_case.h"
#include "runner/formats/torch_save_writer.h"
#include "tsrepro/after_settings.h"
#include "tsrepro/error.h"

namespace tsrepro::cli {
namespace {

struct AfterCliOptions {
  std::string case_dir;
  std::string backend;
  std::vector<std::string> backend_opts;  // key=value
  int id = 0;
  std::string outputs;         // write the call's outputs here (torch.save)
  bool settings = false;       // print the TSREPRO_* settings as JSON and exit
  bool claim_run_dir = false;  // claim the run directory of process `pid` and print its path
  int pid = 0;
};

// The TSREPRO_* variables as tsrepro reads them (tsrepro/after_settings.h), for the shim.
int print_settings() {
  const AfterSettings s = AfterSettings::from_environment();
  const char* stages[] = {nullptr, "graph", "fusion"};
  const char* stage = stages[static_cast<int>(s.stage)];
  nlohmann::json j = {
      {"stage", stage ? nlohmann::json(stage) : nlohmann::json(nullptr)}, {"level", s.level}, {"dir", s.dir}};
  std::cout << j.dump() << "\n";
  return 0;
}

// One call of the case's graph through the workflow, as the environment asks. Exit 1 when it
// reported a failure.
int after_command(const AfterCliOptions& o) {
  if (o.settings) return print_settings();
  if (o.claim_run_dir) {
    bool made_now = false;
    std::cout << claim_run_directory(AfterSettings::from_environment().dir, made_now, o.pid) << "\n";
    return 0;
  }
  if (o.case_dir.empty()) throw UserError("tsrepro after: no case directory given");
  if (o.backend.empty()) throw UserError("tsrepro after: no --backend given");
  const Case c = load_case(o.case_dir);
  if (!c.values)
    throw UserError(o.case_dir + ": has no real inputs (inputs.pt); the workflow needs the program's values");
  const BackendOptions options = parse_backend_options(o.backend_opts);
  check_backend(o.backend, options);  // before the workflow compiles anything
  CompiledModule fn = compile_case(c, o.backend, options, o.id);
  try {
    const c10::IValue outputs = fn(*c.values);
    if (!o.outputs.empty()) write_torch_save(o.outputs, outputs);
  } catch (const UserError&) {
    throw;
  } catch (const std::exception& e) {
    const std::string what = e.what();
    std::cerr << "tsrepro after: " << o.backend << " failed: " << what.substr(0, what.find('\n')) << "\n";
    return 1;
  }
  return fn.failures_reported() > 0 ? 1 : 0;
}

class AfterCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app, Invocation& invocation) override {
    auto* cmd = app.add_subcommand(
        "after", "run a case once through the TSREPRO_AFTER / TSREPRO_LEVEL workflow (used by the Python shim)");
    cmd->add_option("case", options_.case_dir, "case directory with real inputs");
    cmd->add_option("--backend", options_.backend, "the backend the program uses");
    cmd->add_option("--backend-opt", options_.backend_opts, "backend option key=value (repeatable)");
    cmd->add_option("--id", options_.id, "number in the subjects' names (graph_<id>)")->check(CLI::PositiveNumber);
    cmd->add_option("--outputs", options_.outputs, "write the call's outputs to this file (torch.save)");
    auto* settings =
        cmd->add_flag("--settings", options_.settings, "print the TSREPRO_* settings as one JSON object and exit");
    auto* claim = cmd->add_flag("--claim-run-dir", options_.claim_run_dir,
                                "claim the run directory of process --pid under TSREPRO_DIR, print its path and exit");
    settings->excludes(claim);
    cmd->add_option("--pid", options_.pid, "with --claim-run-dir: the process the directory is named after");
    add_load_library_flag(*cmd, invocation.libraries);
    return cmd;
  }
  int run(const Invocation&) override { return after_command(options_); }

 private:
  AfterCliOptions options_;
};

}  // namespace

std::unique_ptr<Command> make_after_command() { return std::make_unique<AfterCommand>(); }

}  // namespace tsrepro::cli
