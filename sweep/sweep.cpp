// The sweep's phases and its grouping (sweep.h). Every result is read back from the job
// directories, so an interrupted sweep and a resumed one build the same sweep.json.

#include "sweep/sweep.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "runner/file_util.h"
#include "sweep/canonical_form.h"
#include "sweep/executor.h"
#include "sweep/index_html.h"
#include "sweep/pattern_match.h"
#include "sweep/zoo.h"
#include "tsrepro/case.h"
#include "tsrepro/error.h"
#include "tsrepro/verdict.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace tsrepro {
namespace {

using Clock = std::chrono::steady_clock;

// One model of the zoo and what became of it.
struct Model {
  ZooEntry entry;
  std::string case_dir;
  std::string import_error;             // empty: imported (or a case already)
  size_t nodes = 0;                     // compute nodes of its graph: the smallest model of a group is minified
  std::map<std::string, json> results;  // per backend: status, signature, message, runs, failed_runs
};

// Failures of one backend with one status and signature: one bug, until minification says two
// groups are one.
struct Group {
  std::string backend, status, signature;
  std::vector<const Model*> models;   // smallest first: the first is the representative
  std::string id;                     // bug-N
  json minify;                        // minify --json's summary; null when it failed
  std::string error;                  // why there is no minified repro
  std::string canonical;              // of the minified graph
  std::vector<std::string> merged;    // ids of the groups found to be the same bug
  std::vector<std::string> backends;  // where it shows: its own, then those of the groups merged into it
};

// --timeout's value as a person writes it (1200, 0.5), not std::to_string's 1200.000000: it shows
// in every job's command, and in the command line each repro.py quotes.
std::string seconds_argument(double seconds) {
  std::ostringstream text;
  text << std::setprecision(15) << seconds;  // 15 digits: any value a person types, exactly
  return text.str();
}

class Sweep {
 public:
  explicit Sweep(const SweepOptions& o) : o_(o), out_(fs::absolute(o.out).lexically_normal()) {
    // Made first: an executor that refuses its settings does so before anything is written.
    executor_ = make_executor(o_.executor, {o_.tsrepro, out_.string(), o_.executor_settings});
  }

  void run() {
    const std::vector<ZooEntry> entries = read_zoo(o_.zoo);
    open_output();
    for (const ZooEntry& e : entries) models_.push_back({e, e.case_dir, "", 0, {}});
    import_models();
    run_models();
    minify_groups();
    merge_same_bugs();
    write_sweep_json(true);
    std::cerr << "sweep: " << bugs().size() << " distinct bugs in " << models_.size() << " models x "
              << o_.backends.size() << " backends; " << (out_ / "sweep.json").string() << ", "
              << (out_ / "index.html").string() << "\n";
  }

 private:
  // OUT is new, or a sweep's with the same settings (then its finished jobs count).
  void open_output() {
    json backend_options = json::object();
    for (const std::string& backend : o_.backends) backend_options[backend] = options_of(backend);
    const json settings = {{"zoo", fs::absolute(o_.zoo).lexically_normal().string()},
                           {"backends", o_.backends},
                           {"backend_options", backend_options},
                           {"repeat", o_.repeat},
                           {"timeout_seconds", o_.timeout_seconds}};
    const fs::path file = out_ / "sweep-settings.json";
    std::error_code ec;
    if (fs::exists(file)) {
      std::ifstream in(file);
      json earlier = json::parse(in, nullptr, false);
      // A sweep of before --backend-opt recorded no backend options: it had none.
      if (!earlier.is_discarded() && !earlier.contains("backend_options"))
        earlier["backend_options"] = no_backend_options();
      for (const auto& [key, value] : settings.items())
        if (earlier.is_discarded() || !earlier.contains(key) || earlier[key] != value)
          throw UserError(out_.string() + ": an earlier sweep used other settings (" + key + ": " +
                          (earlier.is_discarded() ? std::string("unreadable") : earlier.value(key, json()).dump()) +
                          "); use another -o");
      std::cerr << "sweep: going on with " << out_.string() << " (finished jobs are kept)\n";
      return;
    }
    if (fs::exists(out_) && !fs::is_empty(out_, ec))
      throw UserError(out_.string() + ": exists and is not a sweep's output directory");
    fs::create_directories(out_, ec);
    if (ec) throw UserError(out_.string() + ": cannot create: " + ec.message());
    write_file_atomically(file.string(), settings.dump(1) + "\n");
  }

  // A job's command: this tsrepro, the subcommand's arguments, and the custom-operator libraries.
  std::vector<std::string> command(std::vector<std::string> args) const {
    args.insert(args.begin(), o_.tsrepro);
    for (const std::string& library : o_.libraries) args.insert(args.end(), {"--load-library", library});
    return args;
  }

  // The same for a job of one backend: its --backend-opt settings too.
  std::vector<std::string> backend_command(std::vector<std::string> args, const std::string& backend) const {
    for (const auto& [key, value] : options_of(backend))
      args.insert(args.end(), {"--backend-opt", key + "=" + value});
    return command(std::move(args));
  }

  BackendOptions options_of(const std::string& backend) const {
    const auto found = o_.backend_options.find(backend);
    return found == o_.backend_options.end() ? BackendOptions() : found->second;
  }

  json no_backend_options() const {
    json none = json::object();
    for (const std::string& backend : o_.backends) none[backend] = json::object();
    return none;
  }

  std::string job_dir(const std::string& phase, const std::string& name) const {
    return (out_ / "jobs" / phase / name).string();
  }

  // Runs one phase's jobs to the end, with a progress line per finished job.
  void run_phase(const std::string& phase, const std::vector<Job>& jobs) {
    if (jobs.empty()) return;
    size_t already = 0;
    for (const Job& job : jobs) {
      prepare_job(job);
      already += job_finished(job.dir) ? 1 : 0;
    }
    const auto started = Clock::now();
    executor_->run(jobs, [&](size_t finished, size_t total) {
      const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
      const double per_job = finished > already ? seconds / static_cast<double>(finished - already) : 0;
      std::cerr << "sweep: " << phase << " " << finished << "/" << total << " jobs, " << static_cast<int>(seconds)
                << " s, ETA " << static_cast<int>(per_job * static_cast<double>(total - finished) + 0.5) << " s\n";
    });
    jobs_done_ += jobs.size();
  }

  void import_models() {
    std::vector<Job> jobs;
    for (Model& m : models_) {
      if (!m.entry.case_dir.empty()) continue;
      m.case_dir = (out_ / "cases" / m.entry.name).string();
      Job job{job_dir("import", m.entry.name), command({"import", m.entry.model}), {m.case_dir}};
      if (!m.entry.inputs.empty()) job.argv.insert(job.argv.end(), {"--inputs", m.entry.inputs});
      job.argv.insert(job.argv.end(), {"-o", m.case_dir});
      jobs.push_back(job);
    }
    run_phase("import", jobs);
    for (Model& m : models_) {
      if (m.entry.case_dir.empty()) {
        const JobOutcome outcome = *job_outcome(job_dir("import", m.entry.name));
        if (outcome.exit_code != 0) {
          m.import_error = outcome.last_error.empty() ? "import exited with " + std::to_string(outcome.exit_code)
                                                      : outcome.last_error;
          continue;
        }
      }
      std::ifstream in(fs::path(m.case_dir) / "case.json");
      const json meta = json::parse(in, nullptr, false);
      if (!meta.is_discarded()) m.nodes = meta.value("provenance", json::object()).value("imported_compute_nodes", 0);
    }
  }

  Job run_job_of(const Model& m, const std::string& backend, const std::string& phase, int repeat) const {
    const std::string dir = job_dir(phase, m.entry.name + "." + backend);
    Job job{dir,
            backend_command({"run", m.case_dir, "--backend", backend, "--json-file", job_result_file(dir),
                             "--timeout", seconds_argument(o_.timeout_seconds)},
                            backend),
            {}};
    if (repeat > 1) job.argv.insert(job.argv.end(), {"--repeat", std::to_string(repeat)});
    return job;
  }

  // The verdict a run job gave (its --json-file), or an error.
  static json run_result(const JobOutcome& outcome) {
    const json& v = outcome.result;
    if (!v.is_object() || !v.contains("status"))
      return {{"status", "error"},
              {"message", outcome.last_error.empty() ? "tsrepro run exited with " + std::to_string(outcome.exit_code)
                                                     : outcome.last_error}};
    return {{"status", v["status"]},
            {"signature", v.value("signature", "")},
            {"message", v.value("message", "")},
            {"runs", v.value("runs", 1)},
            {"failed_runs", v.value("failed_runs", 0)},
            {"failures", v.value("failures", json::object())},
            {"seconds", v.value("seconds", 0.0)}};
  }

  void run_models() {
    std::vector<Job> jobs;
    for (const Model& m : models_)
      if (m.import_error.empty())
        for (const std::string& backend : o_.backends) jobs.push_back(run_job_of(m, backend, "run", 1));
    run_phase("run", jobs);
    // Every failure again, --repeat times: a flaky one shows its rate.
    std::vector<Job> again;
    for (Model& m : models_) {
      if (!m.import_error.empty()) continue;
      for (const std::string& backend : o_.backends) {
        json result = run_result(*job_outcome(run_job_of(m, backend, "run", 1).dir));
        m.results[backend] = result;
        if (o_.repeat > 1 && is_failure_status(result["status"]))
          again.push_back(run_job_of(m, backend, "rerun", o_.repeat));
      }
    }
    run_phase("rerun", again);
    for (Model& m : models_) {
      for (auto& [backend, result] : m.results) {
        if (!is_failure_status(result["status"]) || o_.repeat <= 1) continue;
        const json rerun = run_result(*job_outcome(run_job_of(m, backend, "rerun", o_.repeat).dir));
        const std::string signature = result["signature"];
        result["runs"] = 1 + rerun.value("runs", 0);
        result["failed_runs"] = 1 + rerun.value("failures", json::object()).value(signature, 0);
      }
    }
  }

  // Failures by backend, status and signature, each list smallest model first.
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<const Model*>> failures_by_signature() const {
    std::map<std::tuple<std::string, std::string, std::string>, std::vector<const Model*>> pools;
    for (const Model& m : models_)
      for (const auto& [backend, result] : m.results)
        if (is_failure_status(result.value("status", "")))
          pools[{backend, result.value("status", ""), result.value("signature", "")}].push_back(&m);
    for (auto& [key, pool] : pools)
      std::sort(pool.begin(), pool.end(), [](const Model* a, const Model* b) {
        return std::tie(a->nodes, a->entry.name) < std::tie(b->nodes, b->entry.name);
      });
    return pools;
  }

  std::string bug_dir(const Group& g) const { return (out_ / "bugs" / g.id).string(); }

  // The representative's run result under the group's backend: its rate is the bug's.
  static const json& representative_result(const Group& g) { return g.models.front()->results.at(g.backend); }
  static bool is_flaky(const Group& g) {
    const json& result = representative_result(g);
    return result.value("failed_runs", 1) < result.value("runs", 1);
  }

  Job minify_job(const Group& g) const {
    const std::string dir = job_dir("minify", g.id);
    Job job{dir,
            backend_command({"minify", g.models.front()->case_dir, "--backend", g.backend, "-o", bug_dir(g),
                             "--json-file", job_result_file(dir), "--timeout", seconds_argument(o_.timeout_seconds)},
                            g.backend),
            {bug_dir(g)}};
    // A flaky failure: a candidate is kept when one of --repeat runs fails.
    if (is_flaky(g)) job.argv.insert(job.argv.end(), {"--repeat", std::to_string(o_.repeat)});
    return job;
  }

  // In rounds: the smallest model left of each signature is minified; the models whose graphs
  // contain its minified graph (pattern_match.h) are that bug; the others wait for the next round.
  void minify_groups() {
    auto pools = failures_by_signature();
    for (int round = 1;; ++round) {
      std::vector<size_t> started;
      for (auto& [key, pool] : pools) {
        if (pool.empty()) continue;
        Group g;
        std::tie(g.backend, g.status, g.signature) = key;
        g.models = {pool.front()};
        g.backends = {g.backend};
        g.id = "bug-" + std::to_string(groups_.size() + 1);
        groups_.push_back(g);
        started.push_back(groups_.size() - 1);
      }
      if (started.empty()) break;
      std::vector<Job> jobs;
      for (size_t i : started) jobs.push_back(minify_job(groups_[i]));
      run_phase("minify (round " + std::to_string(round) + ")", jobs);
      for (size_t i : started)
        assign_models(groups_[i], pools[{groups_[i].backend, groups_[i].status, groups_[i].signature}]);
      write_sweep_json(false);
    }
    std::vector<Job> reports;
    for (const Group& g : groups_)
      if (!g.minify.is_null()) reports.push_back({job_dir("report", g.id), command({"report", bug_dir(g)}), {}});
    run_phase("report", reports);
  }

  // After g's minify: its outcome, and the models of `pool` that are the same bug leave the pool.
  void assign_models(Group& g, std::vector<const Model*>& pool) {
    pool.erase(pool.begin());  // the representative
    const JobOutcome outcome = *job_outcome(job_dir("minify", g.id));
    const json& summary = outcome.result;
    if (outcome.exit_code != 0 || !summary.is_object()) {
      g.error =
          outcome.last_error.empty() ? "minify exited with " + std::to_string(outcome.exit_code) : outcome.last_error;
      return;
    }
    g.minify = summary;
    try {
      const Case minified = load_case((fs::path(bug_dir(g)) / "minified").string());
      g.canonical = canonical_form(*minified.graph);
      // An exception's signature names the bug (its type and its message, masked): the whole pool
      // is that bug, whatever else their graphs hold (vgg11_bn's minified graph keeps a
      // batch_norm that alexnet's has not). The other signatures are coarse (accuracy:float32,
      // crash:SIGSEGV, timeout): there the minified graph decides.
      if (g.status == "exception") {
        g.models.insert(g.models.end(), pool.begin(), pool.end());
        pool.clear();
        return;
      }
      std::vector<const Model*> rest;
      for (const Model* m : pool) {
        if (contains_pattern(graph_of(*m), *minified.graph))
          g.models.push_back(m);
        else
          rest.push_back(m);
      }
      pool = rest;
    } catch (const std::exception& e) {
      g.error = e.what();
    }
  }

  // A model's graph (graph.ir alone, not its inputs), read once: a model may be matched in several
  // rounds and under several backends.
  torch::jit::Graph& graph_of(const Model& m) {
    std::shared_ptr<torch::jit::Graph>& graph = graphs_[m.case_dir];
    if (!graph) {
      const std::string ir = (fs::path(m.case_dir) / "graph.ir").string();
      graph = graph_from_ir(read_file(ir), ir);
    }
    return *graph;
  }

  // Groups whose minified graphs are the same are one bug, across signatures and backends (on
  // libtorch 2.x, jit and ofi run NNC on the CPU too, and show its bugs): the first keeps the
  // models and the backends of all.
  void merge_same_bugs() {
    for (size_t i = 0; i < groups_.size(); ++i) {
      Group& g = groups_[i];
      if (g.canonical.empty() || merged_into_.count(g.id)) continue;
      for (size_t k = i + 1; k < groups_.size(); ++k) {
        Group& other = groups_[k];
        if (other.canonical != g.canonical || merged_into_.count(other.id)) continue;
        merged_into_[other.id] = g.id;
        g.merged.push_back(other.id);
        if (std::find(g.backends.begin(), g.backends.end(), other.backend) == g.backends.end())
          g.backends.push_back(other.backend);
        for (const Model* m : other.models)
          if (std::find(g.models.begin(), g.models.end(), m) == g.models.end()) g.models.push_back(m);
      }
    }
  }

  std::vector<const Group*> bugs() const {
    std::vector<const Group*> bugs;
    for (const Group& g : groups_)
      if (!merged_into_.count(g.id)) bugs.push_back(&g);
    return bugs;
  }

  std::string relative(const fs::path& path) const { return path.lexically_relative(out_).string(); }

  json bug_json(const Group& g) const {
    json models = json::array(), signatures = json::array({g.signature});
    for (const Model* m : g.models) models.push_back(m->entry.name);
    for (const std::string& id : g.merged)
      for (const Group& other : groups_)
        if (other.id == id) signatures.push_back(other.signature);
    const fs::path minified = fs::path(bug_dir(g)) / "minified";
    json bug = {{"id", g.id},
                {"backend", g.backend},
                {"backends", g.backends},
                {"status", g.status},
                {"signature", g.signature},
                {"signatures", signatures},
                {"models", models},
                {"representative", g.models.front()->entry.name},
                {"runs", representative_result(g).value("runs", 1)},
                {"failed_runs", representative_result(g).value("failed_runs", 1)},
                {"flaky", is_flaky(g)},
                {"merged", g.merged}};
    if (!g.minify.is_null()) {
      bug["original_nodes"] = g.minify.value("original_nodes", 0);
      bug["final_nodes"] = g.minify.value("final_nodes", 0);
      bug["queries"] = g.minify.value("queries", 0);
      bug["minify_seconds"] = g.minify.value("seconds", 0.0);
      bug["repro"] = relative(minified / "repro.py");
      bug["repro_cpp"] = relative(minified / "repro.cpp");
      if (fs::exists(fs::path(bug_dir(g)) / "ISSUE.md")) bug["issue"] = relative(fs::path(bug_dir(g)) / "ISSUE.md");
    } else {
      bug["repro"] = nullptr;
    }
    if (!g.error.empty()) bug["error"] = g.error;
    return bug;
  }

  void write_sweep_json(bool finished) const {
    json models = json::array(), bug_list = json::array();
    for (const Model& m : models_) {
      json model = {{"name", m.entry.name}, {"nodes", m.nodes}, {"results", m.results}};
      model["case"] = m.case_dir.empty() ? json(nullptr) : json(m.case_dir);
      if (!m.import_error.empty()) model["import_error"] = m.import_error;
      models.push_back(model);
    }
    for (const Group* g : bugs()) bug_list.push_back(bug_json(*g));
    const json sweep = {{"version", 1},
                        {"finished", finished},
                        {"zoo", fs::absolute(o_.zoo).lexically_normal().string()},
                        {"backends", o_.backends},
                        {"repeat", o_.repeat},
                        {"jobs", jobs_done_},
                        {"models", models},
                        {"bugs", bug_list}};
    write_file_atomically((out_ / "sweep.json").string(), sweep.dump(1) + "\n");
    if (finished) write_index_html(out_.string(), sweep);
  }

  SweepOptions o_;
  fs::path out_;
  std::unique_ptr<Executor> executor_;
  std::vector<Model> models_;
  std::vector<Group> groups_;
  std::map<std::string, std::string> merged_into_;
  std::map<std::string, std::shared_ptr<torch::jit::Graph>> graphs_;  // graph_of's, by case directory
  size_t jobs_done_ = 0;
};

}  // namespace

void run_sweep(const SweepOptions& options) { Sweep(options).run(); }

bool is_failure_status(const std::string& status) {
  try {
    return is_failure(status_from_name(status));
  } catch (const std::invalid_argument&) {
    return false;  // the sweep's own "error", or no result at all
  }
}

}  // namespace tsrepro
