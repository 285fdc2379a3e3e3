// `tsrepro minify`: runs the minifier engine on a case, keeps every accepted state on disk as a
// checkpoint (so a killed run loses nothing), shows progress, and ends with a summary and the
// reproducers in OUT/minified/.

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "cli/command.h"
#include "cli/evaluation_flags.h"
#include "process/child_process.h"
#include "repro/checkpoints.h"
#include "runner/file_util.h"
#include "runner/explain/pass_bisect.h"
#include "tsrepro/error.h"
#include "tsrepro/minify.h"

namespace fs = std::filesystem;

namespace tsrepro::cli {
namespace {

struct MinifyCliOptions : EvaluationCliOptions {
  std::string output_dir;
  bool accuracy = false;
  std::string check_str;
  std::string test_command;
  int jobs = 1;
  std::vector<std::string> passes;
  bool resume = false;
  bool skip_sanity = false;
  bool keep_route_failure = false;
  bool offload = false;
  bool no_passes = false;
  JsonResultFlags json;
  bool list_passes = false;
};

// Totals carried over from the run a --resume continues: the checkpoint records them.
struct EarlierProgress {
  size_t original_nodes = 0;
  size_t queries = 0;
  size_t cache_hits = 0;
  double seconds = 0;
};

EarlierProgress progress_recorded_in(const Case& checkpoint) {
  EarlierProgress p;
  const nlohmann::json m = checkpoint.provenance.value("minify", nlohmann::json::object());
  p.original_nodes = m.value("original_nodes", count_compute_nodes(*checkpoint.graph));
  p.queries = m.value("queries", size_t{0});
  p.cache_hits = m.value("cache_hits", size_t{0});
  p.seconds = m.value("seconds", 0.0);
  return p;
}

// The state with the running totals stamped into case.json's provenance.
Case stamped(const Case& state, const EarlierProgress& earlier, const MinifyStats& stats) {
  Case c = state;  // shares the graph and values: write_case only reads them
  c.provenance["minify"] = {{"original_nodes", earlier.original_nodes},
                            {"queries", earlier.queries + stats.queries},
                            {"cache_hits", earlier.cache_hits + stats.cache_hits},
                            {"seconds", earlier.seconds + stats.seconds}};
  return c;
}

std::string seconds_text(double seconds) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << seconds << " s";
  return s.str();
}

// "   compile 8.1 s/query (last 7.9 s)": what the tested backend's compile costs a query, where the
// worker measured it (an Inductor compile is most of a query).
std::string compile_text(const MinifyStats& stats) {
  if (stats.compile_ms_median <= 0) return "";
  return "   compile " + seconds_text(stats.compile_ms_median / 1000) + "/query (last " +
         seconds_text(stats.compile_ms_last / 1000) + ")";
}

// Keeps every state the minifier accepts on disk as a checkpoint, so that a killed run loses
// nothing, then hands the event on to `next` (the console).
class CheckpointingObserver : public MinifyObserver {
 public:
  // `loaded`: the case the minify starts from, read from `case_dir`; `earlier`: the totals of
  // the run a --resume continues (original_nodes is filled in at the start).
  CheckpointingObserver(const CheckpointWriter& writer, MinifyObserver& next, EarlierProgress& earlier, bool resumed,
                        const Case& loaded, std::string case_dir)
      : writer_(writer),
        next_(next),
        earlier_(earlier),
        resumed_(resumed),
        loaded_(loaded),
        case_dir_(std::move(case_dir)) {}

  void on_start(const Case& state, const Verdict& original) override {
    if (earlier_.original_nodes == 0) earlier_.original_nodes = count_compute_nodes(*state.graph);
    // A resumed run starts from a checkpoint that is already on disk. The first checkpoint of a
    // real model holds all its parameters again: where the starting values are the loaded
    // case's own, its inputs.pt is linked instead of written (a model's worth of writes saved).
    if (!resumed_)
      writer_.write_checkpoint(stamped(state, earlier_, {}),
                               same_values(state, loaded_) ? case_dir_ + "/inputs.pt" : std::string());
    next_.on_start(state, original);
  }

  void on_accepted(const Case& state, const AcceptedStep& step) override {
    writer_.write_checkpoint(stamped(state, earlier_, step.stats));
    next_.on_accepted(state, step);
  }

  void on_query(const std::string& pass, const MinifyStats& stats, size_t nodes) override {
    next_.on_query(pass, stats, nodes);
  }

 private:
  // The same values (tensors by identity: the very ones loaded), in the same order.
  static bool same_values(const Case& a, const Case& b) {
    if (!a.values || !b.values || a.values->size() != b.values->size()) return false;
    for (size_t i = 0; i < a.values->size(); ++i)
      if (!(*a.values)[i].isSameIdentity((*b.values)[i])) return false;
    return true;
  }

  const CheckpointWriter& writer_;
  MinifyObserver& next_;
  EarlierProgress& earlier_;
  bool resumed_;
  const Case& loaded_;
  std::string case_dir_;
};

// The minify as people follow it: a line per accepted step on `steps`, and a live progress line
// on a terminal's stderr.
class ConsoleObserver : public MinifyObserver {
 public:
  ConsoleObserver(std::ostream& steps, const EarlierProgress& earlier, bool resumed)
      : steps_(steps), earlier_(earlier), resumed_(resumed), live_(::isatty(STDERR_FILENO)) {}

  void on_start(const Case& state, const Verdict& original) override {
    clear_live_line();
    steps_ << "start: " << count_compute_nodes(*state.graph) << " compute nodes, failure "
           << (state.expected ? state.expected->status_text() + ": " + state.expected->signature
                              : std::string("(decided by the test)"))
           << (resumed_ ? "  (resumed from a checkpoint)" : "") << std::endl;
  }

  void on_accepted(const Case& state, const AcceptedStep& step) override {
    clear_live_line();
    steps_ << std::left << std::setw(22) << step.pass << std::right << std::setw(6) << step.nodes_before << " -> "
           << std::setw(5) << std::left << step.nodes_after << std::right << " nodes   queries "
           << earlier_.queries + step.stats.queries << "   " << seconds_text(earlier_.seconds + step.stats.seconds)
           << compile_text(step.stats) << std::endl;
  }

  void on_query(const std::string& pass, const MinifyStats& stats, size_t nodes) override {
    if (!live_) return;
    std::fprintf(stderr, "\r\033[K  %s: %zu nodes, %zu queries, %zu cached, %.1f s%s", pass.c_str(), nodes,
                 earlier_.queries + stats.queries, earlier_.cache_hits + stats.cache_hits,
                 earlier_.seconds + stats.seconds, compile_text(stats).c_str());
    std::fflush(stderr);
    line_shown_ = true;
  }

  void clear_live_line() {
    if (!line_shown_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    line_shown_ = false;
  }

 private:
  std::ostream& steps_;
  const EarlierProgress& earlier_;
  bool resumed_;
  bool live_;
  bool line_shown_ = false;
};

// The flags as the engine's options, judging under `run`, validated (UserError before any work).
MinifyOptions engine_options(const MinifyCliOptions& o, const RunSpec& run) {
  MinifyOptions m;
  m.run = run;
  m.jobs = o.jobs;
  m.passes = o.passes;
  m.offload = o.offload;
  m.keep_route_failure = o.keep_route_failure;
  if (o.accuracy) m.interest = Interest::Accuracy;
  if (!o.check_str.empty()) {
    m.interest = Interest::CheckStr;
    m.check_str = o.check_str;
  }
  if (!o.test_command.empty()) {
    m.interest = Interest::TestCommand;
    m.test_command = o.test_command;
  }
  m.validate();
  return m;
}

// --skip-sanity: the failure to keep, without running the original. Recorded in case.json (a
// checkpoint, a TSREPRO_AFTER dump), or not needed by the interest rule.
ExpectedFailure failure_without_sanity_run(const Case& c, const MinifyCliOptions& o, const MinifyOptions& m) {
  if (c.expected && c.expected->run.backend == m.run.backend) return *c.expected;
  ExpectedFailure f{m.run, std::nullopt, ""};
  if (m.interest == Interest::Accuracy) f.status = Status::Accuracy;
  if (m.interest == Interest::SameFailure)
    throw UserError("--skip-sanity: " + o.case_dir + "/case.json records no failure under " + m.run.backend +
                    " to keep; run once without --skip-sanity");
  return f;
}

void print_not_failing(const NotFailingError& e, const MinifyCliOptions& o, const RunSpec& run) {
  const Verdict& v = e.verdict;
  if (o.json.wanted())
    o.json.give(
        nlohmann::json{{"status", "not_failing"}, {"message", e.what()}, {"verdict", verdict_to_json(v)}}.dump());
  std::cerr << "tsrepro: nothing to minify: " << e.what() << "\n"
            << "  ran:     " << run.ref << " vs " << run.backend << " on " << run.device << " (timeout "
            << run.timeout_seconds << " s)\n"
            << "  verdict: " << status_name(v.status) << (v.signature.empty() ? "" : " " + v.signature) << "\n";
  if (!v.message.empty()) std::cerr << "  message: " << v.message.substr(0, v.message.find('\n')) << "\n";
}

// This process's peak resident set (its workers not included), for --offload's accounting.
double own_peak_rss_mib() {
  struct rusage usage {};
  ::getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux reports KiB
}

// Where each node left came from (node_origin.h): empty where the case has no origins.
nlohmann::json final_node_origins(const Case& minimized) {
  nlohmann::json list = nlohmann::json::array();
  if (minimized.node_origins)
    for (const NodeOrigin& o : origins_in_graph(*minimized.graph, *minimized.node_origins))
      list.push_back(origin_to_json(o));
  return list;
}

// The accepted steps of this run as nodes against queries so far: what the sweep's page plots.
nlohmann::json trace_json(const MinifyResult& r, const EarlierProgress& earlier) {
  nlohmann::json trace = nlohmann::json::array();
  for (const AcceptedStep& step : r.steps)
    trace.push_back(
        {{"pass", step.pass}, {"nodes", step.nodes_after}, {"queries", earlier.queries + step.stats.queries}});
  return trace;
}

nlohmann::json summary_json(const MinifyResult& r, const EarlierProgress& earlier, const std::string& repro_dir) {
  const ExpectedFailure& f = *r.minimized.expected;
  return {{"original_nodes", earlier.original_nodes},
          {"final_node_origins", final_node_origins(r.minimized)},
          {"final_nodes", r.final_nodes},
          {"queries", earlier.queries + r.stats.queries},
          {"cache_hits", earlier.cache_hits + r.stats.cache_hits},
          {"seconds", earlier.seconds + r.stats.seconds},
          {"query_ms_median", r.stats.query_ms_median},
          {"query_overhead_ms_median", r.stats.query_overhead_ms_median},
          {"compile_ms_median", r.stats.compile_ms_median},
          {"stored_outcomes", r.stats.stored_outcomes},
          {"peak_rss_mib", own_peak_rss_mib()},
          {"kind", f.status_text()},
          {"signature", f.signature},
          {"one_minimal", r.one_minimal},
          {"steps", r.steps.size()},
          {"trace", trace_json(r, earlier)},
          {"repro_dir", repro_dir},
          {"repro_py", fs::exists(repro_dir + "/repro.py") ? repro_dir + "/repro.py" : ""}};
}

void print_summary(const nlohmann::json& s, const std::string& out_dir) {
  const std::string dir = s["repro_dir"];
  std::cout << "\nminified:  " << s["original_nodes"] << " -> " << s["final_nodes"] << " compute nodes"
            << (s["one_minimal"].get<bool>() ? " (1-minimal: cutting any one node loses the failure)"
                                             : " (not 1-minimal)")
            << "\n"
            << "queries:   " << s["queries"] << " run, " << s["cache_hits"] << " cache hits"
            << (s["stored_outcomes"].get<size_t>() > 0 ? " (" + std::to_string(s["stored_outcomes"].get<size_t>()) +
                                                             " outcomes known from the run resumed, in outcomes.tsv)"
                                                       : std::string())
            << ", " << seconds_text(s["seconds"].get<double>())
            << (s["compile_ms_median"].get<double>() > 0
                    ? ", the backend's compile " + seconds_text(s["compile_ms_median"].get<double>() / 1000) + "/query"
                    : std::string())
            << "\n"
            << "failure:   " << s["signature"].get<std::string>() << "\n";
  if (s.contains("passes")) std::cout << "bisected:  " << s["passes"]["finding"].get<std::string>() << "\n";
  for (const nlohmann::json& o : s["final_node_origins"]) {
    std::cout << "from:      " << o["kind"].get<std::string>();
    if (!o["file"].get<std::string>().empty())
      std::cout << " at " << o["file"].get<std::string>() << ":" << o["line"].get<int64_t>();
    if (!o["module_path"].get<std::string>().empty()) std::cout << " in " << o["module_path"].get<std::string>();
    std::cout << " (node " << o["index"].get<int64_t>() << " of the imported graph)\n";
  }
  std::cout << "case:      " << dir << "/ (checkpoints in " << out_dir << "/checkpoints/)\n";
  if (!s["repro_py"].get<std::string>().empty())
    std::cout << "repro:     /usr/bin/python3 " << dir << "/repro.py      (exits 1 while the failure reproduces)\n"
              << "           cmake -S " << dir << " -B " << dir << "/build && cmake --build " << dir << "/build && "
              << dir << "/build/repro " << dir << "\n";
}

// How long the pass search on the minified case may take: a handful of runs of a few nodes (a
// compile each under PyTorch 2).
constexpr int kPassSearchSeconds = 600;

// After which of the backend's passes the minified case fails (issue 54): `tsrepro explain --passes`
// on it, in a child process (a prefix of the passes may crash where the whole did not). What case.json
// records as provenance "passes": the pass (null where none is named), its index, the finding, the runs,
// and under PyTorch 2 CompilerBisector's stage, subsystem, bisect number and runs_right_with.
nlohmann::json pass_search(const std::string& case_dir, const std::string& backend) {
  // The others are answered here, without a process (under PyTorch 2, without a Python start).
  if (!splits_into_passes(backend)) return {{"pass", nullptr}, {"finding", unsplit_finding(backend)}, {"runs", 0}};
  std::error_code ec;
  ChildSpec spec;
  spec.argv = {fs::read_symlink("/proc/self/exe", ec).string(), "explain", "--passes", case_dir, "--json"};
  spec.out = Stream::pipe();
  spec.err = Stream::null();
  const ChildRun r = run_child(spec, std::chrono::seconds(kPassSearchSeconds));
  const auto unfinished = [&](const std::string& why) {
    return nlohmann::json{{"pass", nullptr}, {"finding", "the pass search did not finish: " + why}, {"runs", 0}};
  };
  if (ec) return unfinished("no path to tsrepro itself");
  if (!r.exited_with(0))
    return unfinished(r.timed_out ? "no answer within " + std::to_string(kPassSearchSeconds) + " s" : r.status_text());
  try {
    const size_t line = r.out.rfind("\n{");  // the object is explain's last line of output
    const nlohmann::json found = nlohmann::json::parse(r.out.substr(line == std::string::npos ? 0 : line + 1));
    nlohmann::json recorded = found;  // what the report needs: each try's verdict stays explain's
    for (const char* key : {"verdict", "passes", "prefixes"}) recorded.erase(key);
    return recorded;
  } catch (const std::exception& e) {
    return unfinished(std::string("unreadable answer (") + e.what() + ")");
  }
}

int list_passes_command() {
  size_t width = 0;
  for (const PassInfo& p : list_passes()) width = std::max(width, p.name.size() + 2);
  for (const PassInfo& p : list_passes())
    std::cout << std::left << std::setw(static_cast<int>(width)) << p.name << p.description << "\n";
  return 0;
}

// A resumed minify judges as the checkpoint records it: a flag that would judge otherwise is refused
// (the inputs are the checkpoint's own whatever --fake-inputs and --seed said).
RunSpec resumed_run_spec(const MinifyCliOptions& o, const Case& checkpoint, const std::string& checkpoint_dir) {
  if (!checkpoint.expected) throw UserError(checkpoint_dir + "/case.json: records no failure to keep; minify anew");
  std::vector<std::string> overrides;
  RunSpec run = o.resolved_run_spec(checkpoint.expected->run, overrides);
  for (const std::string& line : overrides)
    if (line.rfind("--fake-inputs", 0) != 0 && line.rfind("--seed", 0) != 0)
      throw UserError(checkpoint_dir + ": the minify being resumed judged it otherwise: " + line +
                      "; resume with its flags, or minify into another -o");
  run.fake_inputs = false;  // a checkpoint's values are the ones to keep
  return run;
}

// Exit 0 when minified, 3 when the original case does not fail as required.
int minify_command(const MinifyCliOptions& o, const std::string& command_line) {
  const Case original = load_case(o.case_dir);

  const fs::path out = fs::path(o.output_dir).lexically_normal();
  const std::string out_dir = (out.has_filename() ? out : out.parent_path()).string();
  if (fs::exists(out_dir) && !o.resume)
    throw UserError(out_dir + ": already exists (add --resume to continue from its checkpoints, or choose another -o)");
  if (fs::exists(out_dir) && !fs::is_directory(out_dir)) throw UserError(out_dir + ": not a directory");
  const auto checkpoint = o.resume ? smallest_checkpoint(out_dir) : std::nullopt;

  Case start = original;
  EarlierProgress earlier;
  RunSpec run;
  if (checkpoint) {
    start = load_case(*checkpoint);
    run = resumed_run_spec(o, start, *checkpoint);
  } else {
    // As case.json records the case judged, but for the flags given.
    std::vector<std::string> overrides;
    run = o.resolved_run_spec(recorded_run(original), overrides);
    for (const std::string& line : overrides)
      std::cerr << "note: " << line << " overrides how " << o.case_dir << "/case.json records the case judged\n";
  }
  MinifyOptions options = engine_options(o, run);
  if (checkpoint) {
    earlier = progress_recorded_in(start);
    options.known_failure = *start.expected;
    spdlog::info("resuming from {}", *checkpoint);
  } else if (o.skip_sanity) {
    options.known_failure = failure_without_sanity_run(original, o, options);
  }

  if (start.values) options.inputs_file = (checkpoint ? *checkpoint : o.case_dir) + "/inputs.pt";
  options.outcomes_file = out_dir + "/outcomes.tsv";
  CheckpointWriter writer(out_dir, repro_settings_for(options, command_line));
  ConsoleObserver console(o.json.print ? std::cerr : std::cout, earlier, checkpoint.has_value());
  CheckpointingObserver observer(writer, console, earlier, checkpoint.has_value(), original, o.case_dir);
  // A run that created OUT and fails before its first checkpoint leaves nothing behind; one
  // that accepted a checkpoint keeps it, whatever stops it later.
  auto remove_if_nothing_accepted = [&] {
    std::error_code ec;
    if (checkpoint || !fs::is_empty(out_dir + "/checkpoints", ec) || ec) return;
    remove_tree(out_dir + "/checkpoints");
    fs::remove(options.outcomes_file, ec);
    ::rmdir(out_dir.c_str());
  };
  MinifyResult result;
  try {
    result = minify(start, options, observer);
  } catch (const NotFailingError& e) {
    console.clear_live_line();
    print_not_failing(e, o, options.run);
    remove_if_nothing_accepted();
    return 3;
  } catch (...) {
    console.clear_live_line();
    remove_if_nothing_accepted();
    throw;
  }
  console.clear_live_line();

  Case minimized = stamped(result.minimized, earlier, result.stats);
  std::string repro_dir = writer.write_final(minimized);
  if (!o.no_passes) {  // recorded in the case, so that its repro files and ISSUE.md say it too
    minimized.provenance["passes"] = pass_search(repro_dir, options.run.backend);
    repro_dir = writer.write_final(minimized);
  }
  nlohmann::json summary = summary_json(result, earlier, repro_dir);
  if (!o.no_passes) summary["passes"] = minimized.provenance["passes"];
  write_file_atomically(out_dir + "/summary.json", summary.dump(2) + "\n");
  o.json.give(summary.dump());
  if (!o.json.print) print_summary(summary, out_dir);
  return 0;
}

class MinifyCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app, Invocation& invocation) override {
    auto* cmd =
        app.add_subcommand("minify", "shrink a failing case to a 1-minimal graph and write repro.py / repro.cpp");
    // case, --backend and -o are checked in check_flags: --list-passes needs none of them.
    add_evaluation_flags(*cmd, o_, "seconds before a candidate counts as hung",
                         "start from seeded fake inputs of the recorded shapes");
    cmd->add_option("-o,--output", o_.output_dir, "output directory: checkpoints/, minified/, summary.json");
    auto* accuracy = cmd->add_flag("--accuracy", o_.accuracy,
                                   "keep accuracy failures only; exceptions and crashes are not interesting");
    auto* check_str = cmd->add_option("--check-str", o_.check_str,
                                      "a failure is interesting when this regex matches its signature or message");
    auto* test = cmd->add_option("--test", o_.test_command,
                                 "interesting when CMD CANDIDATE_CASE_DIR exits 0 (llvm-reduce style)");
    accuracy->excludes(check_str)->excludes(test);
    check_str->excludes(test);
    cmd->add_option("-j,--jobs", o_.jobs, "candidates run in parallel (worker processes)")
        ->capture_default_str()
        ->check(CLI::Range(1, 64));
    cmd->add_option("--passes", o_.passes, "comma-separated passes to run (default: all)")->delimiter(',');
    cmd->add_flag("--resume", o_.resume, "continue from the smallest checkpoint in the output directory");
    cmd->add_flag("--skip-sanity", o_.skip_sanity, "do not run the original case first");
    cmd->add_flag("--no-passes", o_.no_passes,
                  "do not ask, of the minified case, after which of the backend's passes it fails (explain --passes)");
    cmd->add_flag("--keep-route-failure", o_.keep_route_failure,
                  "minify a failure on the way into a PyTorch 2 compiler (phase route) as the failure asked about");
    cmd->add_flag(
        "--offload", o_.offload,
        "keep the reference values the cutting passes feed in on disk (a temporary directory), not in memory");
    add_json_result_flags(*cmd, o_.json, "the summary");
    cmd->add_flag("--list-passes", o_.list_passes, "list the reduction passes and exit");
    add_load_library_flag(*cmd, invocation.libraries);
    return cmd;
  }
  void check_flags() const override {
    if (o_.list_passes) return;
    if (o_.case_dir.empty()) throw CLI::RequiredError("case");
    if (o_.output_dir.empty()) throw CLI::RequiredError("--output");
  }
  bool runs_workers() const override { return !o_.list_passes; }
  std::string case_dir() const override { return o_.case_dir; }
  int run(const Invocation& invocation) override {
    return o_.list_passes ? list_passes_command() : minify_command(o_, invocation.command_line);
  }

 private:
  MinifyCliOptions o_;
};

}  // namespace

std::unique_ptr<Command> make_minify_command() { return std::make_unique<MinifyCommand>(); }

}  // namespace tsrepro::cli
