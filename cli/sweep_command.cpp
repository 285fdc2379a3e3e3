// `tsrepro sweep ZOO -o OUT`: every model of a zoo under every backend, the failures grouped into
// distinct bugs, each minified and reported (sweep/sweep.h); and `tsrepro sweep-job DIR`, the one
// job of a sweep that an executor runs (sweep/job.h), left out of --help.

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "cli/command.h"
#include "runner/word_lists.h"
#include "sweep/executor.h"
#include "sweep/job.h"
#include "sweep/sweep.h"
#include "tsrepro/backend.h"
#include "tsrepro/backend_defaults.h"
#include "tsrepro/error.h"
#include "tsrepro/run_spec.h"

namespace fs = std::filesystem;

namespace tsrepro::cli {
namespace {

// Each swept backend's options: the --backend-opt settings whose KEY it takes (backends.def), each
// backend and its options checked as `tsrepro run` checks them (check_backend), a setting that no
// swept backend takes refused. UserError naming what is wrong.
std::map<std::string, BackendOptions> backend_options_of(const std::vector<std::string>& backends,
                                                         const std::vector<std::string>& settings) {
  if (backends.empty()) throw UserError("--backends: no backend given");
  const BackendOptions given = parse_backend_options(settings);
  std::map<std::string, BackendOptions> options;
  std::set<std::string> taken;
  for (const std::string& backend : backends) {
    make_backend(backend, {});  // unknown: UserError naming it
    const std::vector<std::string>& keys = find_backend(backend)->option_keys;
    for (const auto& [key, value] : given) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) continue;
      options[backend][key] = value;
      taken.insert(key);
    }
  }
  for (const auto& [key, value] : given)
    if (!taken.count(key))
      throw UserError("--backend-opt " + key + "=" + value + ": none of the swept backends (" + joined(backends, ", ") +
                      ") takes " + key);
  for (const std::string& backend : backends) check_backend(backend, options[backend]);
  return options;
}

class SweepCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app, Invocation& invocation) override {
    auto* cmd = app.add_subcommand(
        "sweep", "run every model of a zoo under every backend; group the failures into bugs; minify and report each");
    cmd->add_option("zoo", options_.zoo, "directory of models (model.pt + inputs.pt, or case directories; zoo.json)")
        ->required();
    cmd->add_option("-o,--output", options_.out, "output directory: sweep.json, bugs/, cases/, jobs/ (resumable)")
        ->required();
    cmd->add_option("--backends", backends_, "comma-separated backends to run every model under")
        ->capture_default_str();
    std::string executors;
    for (const ExecutorEntry& e : executor_table()) executors += "\n  " + e.name + ": " + e.description;
    cmd->add_option("--executor", options_.executor, "where jobs run:" + executors)
        ->capture_default_str()
        ->check(CLI::IsMember(executor_names()));
    // One KEY=VALUE per flag: a vector option would otherwise take the zoo after it too.
    cmd->add_option("--executor-opt", options_.executor_settings,
                    "KEY=VALUE: a setting of the executor (repeatable; each executor says which it takes)")
        ->allow_extra_args(false);
    cmd->add_option("--backend-opt", backend_settings_,
                    "KEY=VALUE: a backend option, for each swept backend that takes KEY (repeatable)")
        ->allow_extra_args(false);
    cmd->add_option("-j,--jobs", jobs_, "the local executor's jobs at once (--executor-opt jobs=N)")
        ->check(CLI::PositiveNumber);
    cmd->add_option("--repeat", options_.repeat, "runs of every failure again, for its rate (flaky failures)")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    cmd->add_option("--timeout", options_.timeout_seconds, "seconds before one run counts as hung")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    add_load_library_flag(*cmd, invocation.libraries);
    return cmd;
  }
  int run(const Invocation& invocation) override {
    // Loaded here too; the jobs load them again, wherever they run.
    for (const std::string& library : invocation.libraries)
      options_.libraries.push_back(fs::absolute(library).string());
    options_.backends = comma_separated(backends_);
    options_.backend_options = backend_options_of(options_.backends, backend_settings_);  // before any job starts
    if (jobs_ > 0)
      options_.executor_settings.insert(options_.executor_settings.begin(), "jobs=" + std::to_string(jobs_));
    options_.tsrepro = fs::read_symlink("/proc/self/exe").string();
    run_sweep(options_);
    return 0;
  }

 private:
  SweepOptions options_;
  std::string backends_ = kDefaultSweepBackends;
  std::vector<std::string> backend_settings_;  // --backend-opt KEY=VALUE
  int jobs_ = 0;  // -j: 0 where not given
};

class SweepJobCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app, Invocation&) override {
    auto* cmd = app.add_subcommand("sweep-job", "run one job of a sweep (what the executors start)");
    cmd->group("");  // not for people: left out of --help
    cmd->add_option("dir", dir_, "the job's directory (job.json)")->required();
    return cmd;
  }
  int run(const Invocation&) override {
    run_job(dir_);
    return 0;
  }

 private:
  std::string dir_;
};

}  // namespace

std::unique_ptr<Command> make_sweep_command() { return std::make_unique<SweepCommand>(); }
std::unique_ptr<Command> make_sweep_job_command() { return std::make_unique<SweepJobCommand>(); }

}  // namespace tsrepro::cli
