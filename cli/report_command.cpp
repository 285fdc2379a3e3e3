// `tsrepro report DIR`: ISSUE.md for a recorded failure, and with --archive one .tar.gz holding
// it, the reproducers and the case. The case is run once more (tsrepro's verdict, now) and so is
// its repro.py (what a maintainer will see), with the Python that has torch.

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/command.h"
#include "process/child_process.h"
#include "repro/environment.h"
#include "repro/graph_drawing.h"
#include "repro/issue_report.h"
#include "runner/file_util.h"
#include "runner/worker/worker_client.h"
#include "tsrepro/error.h"
#include "tsrepro/verdict.h"

namespace tsrepro::cli {
namespace {

namespace fs = std::filesystem;

struct ReportOptions {
  std::string dir;  // a case directory, or a minify output directory
  bool archive = false;
};

// How long repro.py may run for the report before it counts as hung.
constexpr int kReproSeconds = 120;

// Runs `program args...` with its stdout and stderr together in ChildRun::out; kills it (and what
// it started) after `seconds`.
ChildRun run_program(const std::string& program, const std::vector<std::string>& args, int seconds) {
  ChildSpec spec;
  spec.argv = {program};
  spec.argv.insert(spec.argv.end(), args.begin(), args.end());
  spec.out = Stream::pipe();
  spec.err = Stream::as_stdout();
  return run_child(spec, std::chrono::seconds(seconds));
}

std::string status_text(const ChildRun& r, int seconds) {
  return r.timed_out ? "no answer within " + std::to_string(seconds) + " s" : r.status_text();
}

// The first Python that imports torch: $TSREPRO_PYTHON, python3 on PATH, /usr/bin/python3. Its
// facts (repro/templates/report/python_env.py) are null when there is none.
std::string find_python(const fs::path& scratch, nlohmann::json& facts) {
  const fs::path probe = scratch / "python_env.py";
  std::ofstream(probe) << python_environment_probe();
  std::vector<std::string> candidates;
  if (const char* chosen = std::getenv("TSREPRO_PYTHON")) candidates.push_back(chosen);
  const std::string on_path = find_program("python3");
  if (!on_path.empty()) candidates.push_back(on_path);
  candidates.push_back("/usr/bin/python3");
  for (const std::string& python : candidates) {
    const ChildRun r = run_program(python, {probe.string()}, 60);
    if (!r.exited_with(0)) continue;
    try {
      facts = nlohmann::json::parse(r.out.substr(r.out.rfind('{')));
      return python;
    } catch (const std::exception&) {
      continue;
    }
  }
  facts = nullptr;
  return "";
}

// A case directory, or a minify output directory holding minified/.
fs::path case_dir_of(const fs::path& dir) {
  if (fs::exists(dir / "case.json")) return dir;
  if (fs::exists(dir / "minified" / "case.json")) return dir / "minified";
  throw UserError(dir.string() +
                  ": neither a case directory nor a minify output (no case.json, no minified/case.json)");
}

Verdict observe(const Case& c, const ReproSettings& settings, const fs::path& case_dir) {
  settings.failure.run.validate();
  const EvalRequest request = eval_request(c, settings.failure.run, case_dir.string());
  RunnerProcess runner;
  return runner.evaluate(request);
}

// Writes DIR/ISSUE.md (and with archive DIR/tsrepro-report.tar.gz) and prints the paths. Exit 0;
// a directory without a recorded failure is bad input (exit 2).
int report_command(const ReportOptions& o) {
  const fs::path dir = o.dir;
  const fs::path case_dir = case_dir_of(dir);
  const Case c = load_case(case_dir.string());
  IssueReport report;
  report.c = &c;
  report.settings = settings_from_case(c, (case_dir / "case.json").string());
  std::map<std::string, std::string> files = reproducer_files(c, report.settings);
  report.repro_py = files.at("repro.py");
  report.observed = observe(c, report.settings, case_dir);

  // The bundle: the case with its reproducers (repro.py reads inputs.pt beside it when its
  // inputs are too large to write into it), then ISSUE.md.
  const ScratchDirectory scratch_directory = ScratchDirectory::temporary("tsrepro-report");
  const fs::path scratch = scratch_directory.path();
  const fs::path bundle = scratch / "tsrepro-report";
  write_case(c, bundle.string(), false, files);
  nlohmann::json python_facts;
  const std::string python = find_python(scratch, python_facts);
  report.environment = collect_environment(python_facts);
  if (!python.empty() && report.settings.failure.status != Status::Timeout) {
    const ChildRun r = run_program(python, {(bundle / "repro.py").string()}, kReproSeconds);
    report.repro_run = ReproRun{r.out, status_text(r, kReproSeconds)};
  }
  // The graph drawn beside ISSUE.md, where Graphviz is installed.
  if (const std::optional<std::string> svg = svg_of_dot(graph_dot(c))) {
    report.graph_svg = "graph.svg";
    std::ofstream(bundle / report.graph_svg, std::ios::binary) << *svg;
    write_file_atomically((dir / report.graph_svg).string(), *svg);
  }
  const std::string markdown = issue_markdown(report);
  std::ofstream(bundle / "ISSUE.md", std::ios::binary) << markdown;

  const fs::path issue = dir / "ISSUE.md";
  write_file_atomically(issue.string(), markdown);
  std::cout << issue.string() << "\n";
  if (o.archive) {
    const fs::path archive = dir / "tsrepro-report.tar.gz";
    const fs::path temporary = dir / ".tsrepro-report.tar.gz.tmp";
    const ChildRun tar =
        run_program("tar", {"-czf", temporary.string(), "-C", scratch.string(), "tsrepro-report"}, 300);
    if (!tar.exited_with(0)) {
      std::error_code ec;
      fs::remove(temporary, ec);
      throw UserError(archive.string() + ": tar failed: " + (tar.started ? tar.out : tar.status_text()));
    }
    fs::rename(temporary, archive);
    std::cout << archive.string() << "\n";
  }
  return 0;
}

class ReportCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app, Invocation& invocation) override {
    auto* cmd = app.add_subcommand(
        "report",
        "write ISSUE.md for a recorded failure: title, environment, expected vs observed, the short repro.py");
    cmd->add_option("dir", options_.dir, "a case directory with a recorded failure, or a minify output directory")
        ->required();
    cmd->add_flag("--archive", options_.archive,
                  "also write DIR/tsrepro-report.tar.gz: ISSUE.md, repro.py, repro.cpp, CMakeLists.txt and the case");
    add_load_library_flag(*cmd, invocation.libraries);
    return cmd;
  }
  bool runs_workers() const override { return true; }
  std::string case_dir() const override {
    const fs::path dir(options_.dir);
    return fs::exists(dir / "minified" / "case.json") && !fs::exists(dir / "case.json") ? (dir / "minified").string()
                                                                                        : options_.dir;
  }
  int run(const Invocation&) override { return report_command(options_); }

 private:
  ReportOptions options_;
};

}  // namespace

std::unique_ptr<Command> make_report_command() { return std::make_unique<ReportCommand>(); }

}  // namespace tsrepro::cli
