// `tsrepro run CASE --backend B`: a case evaluated in a worker (--repeat times); the verdict printed, and
// with --save-repro recorded in the case with its reproducers.

#include <filesystem>
#include <iostream>

#include <spdlog/spdlog.h>

#include "cli/command.h"
#include "cli/evaluation_flags.h"
#include "runner/worker/repeated_evaluation.h"
#include "tsrepro/backend.h"
#include "tsrepro/error.h"
#include "tsrepro/writer.h"

namespace fs = std::filesystem;

namespace tsrepro::cli {

namespace {

struct RunOptions : EvaluationCliOptions {
  bool explain_backend = false;
  JsonResultFlags json;
  bool save_repro = false;
};

// 1 when at least --min-fails of the --repeat runs failed, 2 when the reference itself fails.
int exit_code_for(const RepeatedVerdict& series, const RunSpec& run) {
  if (series.verdict.status == Status::Invalid) return 2;
  return series.failing(run) ? 1 : 0;
}

// "3 of 5 runs failed: exception:run:... (2), accuracy:float32 (1)": the rate of each failure.
std::string repeat_summary(const RepeatedVerdict& series) {
  std::string text = std::to_string(series.failed_runs) + " of " + std::to_string(series.runs) + " runs failed";
  std::string separator = ": ";
  for (const auto& [signature, times] : series.failures) {
    text += separator + signature + " (" + std::to_string(times) + ")";
    separator = ", ";
  }
  return text;
}

void print_verdict(const RepeatedVerdict& series, const RunOptions& o, const RunSpec& run) {
  const Verdict& v = series.verdict;
  std::cout << "verdict:   " << status_name(v.status)
            << (v.phase == Phase::None || v.status == Status::Pass ? "" : std::string(" (") + phase_name(v.phase) + ")")
            << "\n";
  if (!v.signature.empty()) std::cout << "signature: " << v.signature << "\n";
  if (!v.message.empty()) std::cout << "message:   " << v.message << "\n";
  if (run.repeat > 1) std::cout << "repeated:  " << repeat_summary(series) << "\n";
  if (!v.outputs.empty()) {
    std::cout << "outputs:\n";
    for (const OutputDiff& d : v.outputs)
      std::cout << "  " << d.path << "  " << d.dtype << "  max_abs " << d.max_abs << "  max_rel " << d.max_rel << "  "
                << (d.ok ? "ok" : "FAIL") << (d.reason.empty() ? "" : "  " + d.reason) << "\n";
  }
  std::cout << "ran:       " << run.ref << " vs " << run.backend << " on " << run.device << ", " << v.seconds << " s\n";
  if (v.status == Status::Invalid) std::cout << "The reference itself fails on this case: nothing to compare.\n";
  if (o.explain_backend && !v.backend_graph.empty())
    std::cout << "\nexecuted graph (" << run.backend << "):\n" << v.backend_graph;
}

// --save-repro: the failure goes into case.json and the reproducers beside it, all rewritten
// atomically (the case directory is replaced as a whole).
std::string save_repro(Case c, const RepeatedVerdict& series, const RunSpec& run, const RunOptions& o,
                       const std::string& command_line) {
  const Verdict& verdict = series.verdict;
  c.expected =
      ExpectedFailure{run, verdict.status, verdict.signature, series.runs, series.runs_failing_with(verdict.signature)};
  c.expected->run.fake_inputs = run.fake_inputs || !c.values;
  const ReproSettings settings{*c.expected, command_line};
  write_case(c, o.case_dir, /*replace=*/true, reproducer_files(c, settings));
  return (fs::path(o.case_dir) / "repro.py").string();
}

int run_command(const RunOptions& o, const std::string& command_line) {
  const Case c = load_case(o.case_dir);
  // As case.json records it judged, but for the flags given. Unknown backends and options fail
  // here, before any worker.
  std::vector<std::string> overrides;
  const RunSpec run = o.resolved_run_spec(recorded_run(c), overrides);
  for (const std::string& line : overrides)
    std::cerr << "note: " << line << " overrides how " << o.case_dir << "/case.json records the case judged\n";
  EvalRequest request = eval_request(c, run, o.case_dir);
  request.explain = o.explain_backend;

  RunnerProcess runner;
  const RepeatedVerdict series = evaluate_repeatedly(
      runner, request, [](const Verdict& v) { return v.failed(); }, /*stop_when_decided=*/false);
  const int exit_code = exit_code_for(series, request.run);
  std::string repro_py;
  if (o.save_repro && exit_code == 1) repro_py = save_repro(c, series, request.run, o, command_line);
  if (o.json.wanted()) {
    nlohmann::json j = verdict_to_json(series.verdict);
    j["runs"] = series.runs;
    j["failed_runs"] = series.failed_runs;
    j["failures"] = series.failures;
    j["case"] = o.case_dir;
    j["backend"] = run.backend;
    j["ref"] = run.ref;
    if (!repro_py.empty()) j["repro_py"] = repro_py;
    o.json.give(j.dump());
  }
  if (!o.json.print) {
    print_verdict(series, o, run);
    if (!repro_py.empty()) std::cout << "repro:     /usr/bin/python3 " << repro_py << "\n";
  }
  return exit_code;
}

class RunCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app, Invocation& invocation) override {
    auto* cmd = app.add_subcommand("run", "run a case under a backend and report whether, and how, it fails");
    const EvaluationFlags flags = add_evaluation_flags(*cmd, options_, "seconds before a run counts as hung",
                                                       "use seeded fake inputs of the recorded shapes, not inputs.pt");
    flags.case_dir->required();
    add_load_library_flag(*cmd, invocation.libraries);
    cmd->add_flag("--explain-backend", options_.explain_backend, "print the optimized graph the backend executed");
    add_json_result_flags(*cmd, options_.json, "the verdict");
    cmd->add_flag("--save-repro", options_.save_repro,
                  "on failure, record it in CASE/case.json and write repro.py, repro.cpp, CMakeLists.txt into CASE");
    return cmd;
  }
  bool runs_workers() const override { return true; }
  std::string case_dir() const override { return options_.case_dir; }
  int run(const Invocation& invocation) override { return run_command(options_, invocation.command_line); }

 private:
  RunOptions options_;
};

}  // namespace

std::unique_ptr<Command> make_run_command() { return std::make_unique<RunCommand>(); }

}  // namespace tsrepro::cli
