// libtsrepro_capture.so: the TSREPRO_AFTER workflow for a program that knows nothing of tsrepro,
// C++ or Python, by environment alone:
//
//   TSREPRO_AFTER=fusion TSREPRO_LEVEL=4 LD_PRELOAD=.../libtsrepro_capture.so ./my_app
//
// How it sees the graphs: libtorch runs custom passes (torch/csrc/jit/passes/pass_manager.h) on
// every graph the profiling executor optimizes: the pre passes before fusion, the post passes
// right after it (runNoGradOptimizations, runDiffGraphPasses). This library registers one of
// them when it is loaded, and puts calls of operators of its own around each subject:
// tsrepro_capture::subject_input (one per input: the value that flows in) and
// tsrepro_capture::subject_run before it, tsrepro_capture::subject_done after it.
//
//   TSREPRO_AFTER=fusion  a post pass: every fusion group is a subject (its subgraph).
//   TSREPRO_AFTER=graph   a pre pass: the graph itself, as it is before fusion (profiling nodes
//                         removed, types specialized), its calls at the graph's entry.
//
// When subject_run runs for a subject and an input signature (dtypes, shapes, strides) it has not
// seen, the subject's graph and those values go to disk and the tsrepro executable judges them in
// a child process, as `tsrepro after` does for the Python shim: compiled again under the backend
// (nnc) and checked as TSREPRO_AFTER and TSREPRO_LEVEL say (a fusion group against the
// interpreter, at every level; the graph against eager at level 4). A failure becomes
// fusion_<n>_group_0/ or graph_<n>/ in this process's run directory with repro.py and repro.cpp,
// minify.sh from level 2, a minified case from level 3. Only then does the program's own code
// run: a crash of the check leaves the case behind (it is written before the check), from level 3
// the case of a subject that passed stays until subject_done (a crash of the program's own run
// leaves it too), and the program's own failure still happens.
//
// With no TSREPRO_AFTER the library registers nothing and does nothing after loading.
//
// This is libtsrepro_capture_torch.so, the capture proper. Users preload libtsrepro_capture.so
// (loader.cpp), which loads this library only into a process whose libtorch is the one it links.
// It links libtorch and nothing else of tsrepro (the checks run in the tsrepro executable).

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include <torch/csrc/jit/passes/pass_manager.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/runtime/custom_operator.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/script.h>

#include "capture/capture_voice.h"
#include "capture/subject_graph.h"
#include "capture/tsrepro_child.h"
#include "backends/fusion_group.h"
#include "backends/program_options.h"
#include "runner/file_util.h"
#include "runner/graph/ivalue_tensors.h"
#include "tsrepro/after_settings.h"
#include "tsrepro/backend_defaults.h"
#include "tsrepro/case.h"  // graph_to_ir
#include "tsrepro/error.h"
#include "tsrepro/node_origin.h"

namespace tsrepro::capture {
namespace {

namespace fs = std::filesystem;
using torch::jit::Graph;
using torch::jit::Node;

// ---- settings ------------------------------------------------------------------------------------

struct Settings {
  AfterSettings after;
  std::string backend = kProgramBackend;  // TSREPRO_CAPTURE_BACKEND: the tsrepro backend that stands for the program's
  size_t max_bytes = size_t{1} << 30;     // TSREPRO_CAPTURE_MAX_BYTES: a group's inputs beyond this are not written
};

const char* variable(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

// nullopt: capture off (no TSREPRO_AFTER, a tsrepro process of our own, or a bad setting, said).
std::optional<Settings> settings_from_environment() {
  if (variable(kChildVariable)) return std::nullopt;  // the checks' own processes
  Settings s;
  try {
    s.after = AfterSettings::from_environment();
  } catch (const UserError& e) {
    say(std::string(e.what()) + ": capture is off");
    return std::nullopt;
  }
  if (s.after.stage == AfterSettings::Stage::Off) return std::nullopt;
  if (const char* backend = variable("TSREPRO_CAPTURE_BACKEND")) s.backend = backend;
  if (const char* bytes = variable("TSREPRO_CAPTURE_MAX_BYTES")) {
    char* end = nullptr;
    s.max_bytes = std::strtoull(bytes, &end, 10);
    if (*end != '\0' || bytes[0] == '-') {
      say(std::string("TSREPRO_CAPTURE_MAX_BYTES=") + bytes + ": expected a number of bytes: capture is off");
      return std::nullopt;
    }
  }
  return s;
}

Settings& settings() {
  static Settings s;
  return s;
}

// ---- the run directory and its log ---------------------------------------------------------------

std::mutex log_mutex;

std::string run_dir() {
  bool made_now = false;
  const std::string dir = claim_run_directory(settings().after.dir, made_now);
  if (made_now) say("this run's cases go to " + dir);
  return dir;
}

// RUN/capture.log: what the capture saw and did, one line each (a healthy run leaves only it).
void log_line(const std::string& line) {
  std::lock_guard<std::mutex> lock(log_mutex);
  std::ofstream(run_dir() + "/capture.log", std::ios::app) << line << "\n";
}

// ---- the subjects --------------------------------------------------------------------------------

// A graph the capture may have to report: a fusion group's subgraph, or a whole graph.
struct SubjectRecord {
  std::string what;  // "prim::TensorExprGroup 5 (6 nodes)", "graph 0 (38 nodes)"
  std::string ir;
  // Where its nodes came from, read here from the program's own metadata (source ranges, call
  // stacks): the IR text keeps none, so `tsrepro import --origins` takes them from this.
  std::string origins_json;
  bool fusion_group = true;
  // The IR's inputs past the program's: its tensor constants, lifted (subject_graph.h).
  std::vector<c10::IValue> lifted;
  bool drops_first_input = false;  // the program's unused module input
  bool module_subject = false;     // its graph reads the module: the module is saved instead
};

std::mutex subjects_mutex;
std::vector<SubjectRecord> subjects;   // by the id the pass gave them
std::unordered_set<uint64_t> claimed;  // input_signature()s checked, or being checked
std::atomic<int> checks_started{0};    // numbers the checks: subject_directory_name(n, ...)

// Per thread, what the calls of every run pass on, kept so that a run that was checked before
// costs a hash and a lookup, no allocation and no lock: subject_input's values, by subject id
// (ids are dense), emptied by each subject_run; the signatures this thread knows are claimed.
thread_local std::vector<std::vector<c10::IValue>> pending;
thread_local std::unordered_set<uint64_t> claimed_seen_here;
thread_local std::map<int64_t, std::string> kept_until_done;  // level 3: a passing subject's case

std::vector<c10::IValue>& pending_values(int64_t subject) {
  if (pending.size() <= static_cast<size_t>(subject)) pending.resize(static_cast<size_t>(subject) + 1);
  return pending[static_cast<size_t>(subject)];
}

// Registers a subject and returns its id. Its size is the number of nodes the case will number
// (node_origin.h's rule: compute nodes, nested blocks included, constants left out).
int64_t register_subject(const std::string& kind, Graph& graph, bool fusion_group) {
  SubjectRecord record;
  record.fusion_group = fusion_group;
  record.module_subject = !fusion_group && reads_its_module(graph);
  // A module subject's case is the module, saved: its graph is only numbered, for the size.
  std::shared_ptr<Graph> numbered = graph.copy();
  if (!record.module_subject) {
    SubjectGraph printable = ir_subject_graph(numbered);
    record.ir = graph_to_ir(*printable.graph);  // the text parseIR reads (nodes without outputs: no "=")
    record.lifted = std::move(printable.lifted);
    record.drops_first_input = printable.drops_first_input;
  }
  // Numbered after printing: record_import_origins marks the nodes it numbers.
  const std::shared_ptr<const NodeOrigins> origins = record_import_origins(*numbered);
  if (!record.module_subject) record.origins_json = origins_to_json(*origins).dump();
  std::lock_guard<std::mutex> lock(subjects_mutex);
  const int64_t id = static_cast<int64_t>(subjects.size());
  record.what = kind + " " + std::to_string(id) + " (" + std::to_string(origins->size()) + " nodes)";
  subjects.push_back(std::move(record));
  return id;
}

std::string subject_name(int64_t id) {
  std::lock_guard<std::mutex> lock(subjects_mutex);
  return subjects.at(static_cast<size_t>(id)).what;
}

// A hash of what a compiled subject depends on: each input's kind, and a tensor's dtype, sizes,
// strides and device. Cheap on purpose: it runs on every call of every subject.
uint64_t input_signature(int64_t subject, const std::vector<c10::IValue>& inputs) {
  uint64_t h = static_cast<uint64_t>(subject) * 0x9E3779B97F4A7C15ull;
  auto mix = [&h](uint64_t v) { h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2); };
  for (const c10::IValue& v : inputs) {
    mix(v.isTensor() | v.isInt() << 1 | v.isDouble() << 2 | v.isBool() << 3 | v.isObject() << 4 | v.isList() << 5);
    if (!v.isTensor() || !v.toTensor().defined()) continue;
    const at::Tensor& t = v.toTensor();
    mix(static_cast<uint64_t>(t.scalar_type()));
    mix(static_cast<uint64_t>(t.device().type()) * 131 + static_cast<uint64_t>(t.device().index() + 1));
    for (int64_t d = 0; d < t.dim(); ++d) {
      mix(static_cast<uint64_t>(t.size(d)));
      mix(static_cast<uint64_t>(t.stride(d)));
    }
    mix(static_cast<uint64_t>(t.dim()));
  }
  return h;
}

// ---- the checks, in child processes (tsrepro_child.h) --------------------------------------------

// The backend and its options as the program set them (backends/program_options.h), so that the
// check compiles the subject the way the program did.
std::vector<std::string> backend_arguments() {
  std::vector<std::string> args = {"--backend", settings().backend};
  for (const std::string& option : options_of_this_program(settings().backend)) {
    args.push_back("--backend-opt");
    args.push_back(option);
  }
  return args;
}

// A tensor that was never made: a backward graph gets one for each gradient nothing computed.
// No file holds one, and a case's inputs are a file.
bool holds_undefined_tensor(const c10::IValue& value) {
  return any_tensor(value, [](const at::Tensor& t) { return !t.defined(); });
}

// What the case's graph takes: the program's values (less the module, saved on its own, or an
// unused one), then the lifted constants'.
std::vector<c10::IValue> case_arguments(const SubjectRecord& subject, const std::vector<c10::IValue>& inputs) {
  const bool module_call = subject.module_subject;
  const size_t skipped = module_call || subject.drops_first_input ? 1 : 0;
  std::vector<c10::IValue> arguments(inputs.begin() + std::min(skipped, inputs.size()), inputs.end());
  if (!module_call) arguments.insert(arguments.end(), subject.lifted.begin(), subject.lifted.end());
  return arguments;
}

// Why a subject with these arguments is not checked; empty when it is.
std::string reason_not_to_check(const std::vector<c10::IValue>& arguments) {
  const size_t bytes = tensor_data_bytes(arguments);
  if (bytes > settings().max_bytes)
    return "skipped: its inputs hold " + std::to_string(bytes) +
           " bytes of tensor data, over TSREPRO_CAPTURE_MAX_BYTES=" + std::to_string(settings().max_bytes);
  for (size_t i = 0; i < arguments.size(); ++i)
    if (holds_undefined_tensor(arguments[i]))
      return "not checked: its input " + std::to_string(i) +
             " holds an undefined tensor (a gradient nothing computed), which no case can hold";
  return "";
}

// Writes what `tsrepro import` reads into `scratch`: the graph as IR with its origins, or, for a
// graph that reads its module, the module itself as it is now, whose forward import inlines and
// lifts; and the arguments. Returns the import's arguments.
std::vector<std::string> write_import_files(const SubjectRecord& subject, const std::vector<c10::IValue>& inputs,
                                            const std::vector<c10::IValue>& arguments, const std::string& scratch) {
  const std::string source = scratch + (subject.module_subject ? "/model.pt" : "/graph.ir");
  std::vector<std::string> import = {"import", source, "--inputs", scratch + "/inputs.pt", "-o", scratch + "/case"};
  if (subject.module_subject) {
    torch::jit::Module(inputs.front().toObject()).save(source);
  } else {
    std::ofstream(source) << subject.ir;
    std::ofstream(scratch + "/origins.json") << subject.origins_json;
    import.insert(import.end(), {"--origins", scratch + "/origins.json"});
  }
  const std::vector<char> pickled = torch::jit::pickle_save(c10::ivalue::Tuple::create(arguments));
  std::ofstream(scratch + "/inputs.pt", std::ios::binary).write(pickled.data(), pickled.size());
  return import;
}

// What follows the check `tsrepro after` made of subject `id` (the n-th check), whose case it
// wrote as `written`: a pass keeps the case from level 3 until the program's own run is over; a
// failure is said; a crashed check leaves the case, and from level 3 minifies it.
void act_on_check(int64_t id, const SubjectRecord& subject, const ChildResult& checked, const std::string& scratch,
                  const std::string& written, const std::string& child_log) {
  const std::string& what = subject.what;
  const std::string run = run_dir();
  if (checked.exit_code == 0) {
    log_line(what + (subject.fusion_group ? ": agrees with the interpreter" : ": ran without failing"));
    // From level 3 the case stays until the program's own run of the subject is over
    // (subject_done): if that run crashes where the check did not, the case is left behind.
    if (settings().after.level >= 3) {
      fs::rename(scratch + "/case", written);
      kept_until_done[id] = written;
    }
    fs::remove(child_log);
    return;
  }
  if (checked.exit_code == 1) {
    log_line(what + ": FAILED under " + settings().backend + ": " + written + " (" + child_log + ")");
    say(what + " fails under " + settings().backend + ": wrote " + written);
    return;
  }
  // The check itself crashed (a kernel that segfaults, as the program's own run may next): the
  // case, written before the check ran, stays; from level 3 the minifier runs on it now, in a
  // process of its own (its sanity run finds the crash again).
  const std::string how = checked.signal ? "died of signal " + std::to_string(checked.signal)
                                         : "exited " + std::to_string(checked.exit_code);
  log_line(what + ": the check " + how + " (" + child_log + ")");
  if (!fs::exists(written)) fs::rename(scratch + "/case", written);
  log_line("the case: " + written + " (tsrepro run " + written + " --backend " + settings().backend + ")");
  if (settings().after.level >= 3) {
    std::vector<std::string> minify = {"minify", written, "-o", written + "-minified"};
    for (const std::string& arg : backend_arguments()) minify.push_back(arg);
    log_line("minifying: " + quoted_command(minify));
    const ChildResult minified = run_tsrepro(minify, run, written + "-minified.log");
    log_line("minify exited " + std::to_string(minified.exit_code) + ": " + written + "-minified");
  }
  say(what + ": the check " + how + "; see " + run + "/capture.log");
}

// Writes the subject and its inputs, then has the tsrepro executable import and judge them.
void check_subject(int64_t id, const std::vector<c10::IValue>& inputs) {
  const SubjectRecord subject = [&] {
    std::lock_guard<std::mutex> lock(subjects_mutex);
    return subjects.at(static_cast<size_t>(id));
  }();
  const int n = ++checks_started;
  const std::vector<c10::IValue> arguments = case_arguments(subject, inputs);
  if (const std::string reason = reason_not_to_check(arguments); !reason.empty()) {
    log_line(subject.what + ": " + reason);
    return;
  }
  const std::string run = run_dir();
  // The check's scratch directory goes whichever way the check ends, an exception included.
  const ScratchDirectory scratch = ScratchDirectory::at(run + "/.capture-" + std::to_string(n));
  const std::vector<std::string> import = write_import_files(subject, inputs, arguments, scratch.path());
  const std::string child_log = run + "/capture-" + std::to_string(n) + ".log";
  const ChildResult imported = run_tsrepro(import, run, child_log);
  if (!imported.started) {
    static std::atomic<bool> said{false};
    const std::string line = subject.what + ": not checked: cannot run " + tsrepro_executable() + " (set TSREPRO_BIN)";
    log_line(line);
    if (!said.exchange(true)) say(line);
    fs::remove(child_log);
    return;
  }
  if (imported.exit_code != 0) {
    log_line(subject.what + ": could not be imported (see " + child_log + "); not checked");
    return;
  }
  // The child is `tsrepro after`: the subject, compiled again under the backend and checked as
  // TSREPRO_AFTER and TSREPRO_LEVEL (passed through) say, with the level's consequences.
  std::vector<std::string> after = {"after", scratch.path() + "/case", "--id", std::to_string(n)};
  for (const std::string& arg : backend_arguments()) after.push_back(arg);
  const ChildResult checked = run_tsrepro(after, run, child_log);
  const std::string written = run + "/" + subject_directory_name(n, subject.fusion_group ? 0 : -1);
  act_on_check(id, subject, checked, scratch.path(), written, child_log);
}

// ---- the operators and the pass ------------------------------------------------------------------

c10::AliasAnalysisKind conservative() { return c10::AliasAnalysisKind::CONSERVATIVE; }

const torch::jit::RegisterOperators capture_ops({
    torch::jit::Operator(
        "tsrepro_capture::subject_input(int subject, int index, Any value) -> ()",
        [](torch::jit::Stack& stack) {
          const c10::IValue value = torch::jit::pop(stack);
          const int64_t index = torch::jit::pop(stack).toInt();
          const int64_t subject = torch::jit::pop(stack).toInt();
          std::vector<c10::IValue>& values = pending_values(subject);
          if (values.size() <= static_cast<size_t>(index)) values.resize(static_cast<size_t>(index) + 1);
          values[static_cast<size_t>(index)] = value;
        },
        conservative()),
    torch::jit::Operator(
        "tsrepro_capture::subject_run(int subject) -> ()",
        [](torch::jit::Stack& stack) {
          const int64_t subject = torch::jit::pop(stack).toInt();
          std::vector<c10::IValue>& values = pending_values(subject);
          const uint64_t signature = input_signature(subject, values);
          bool seen = claimed_seen_here.count(signature) > 0;
          if (!seen) {
            std::lock_guard<std::mutex> lock(subjects_mutex);
            seen = !claimed.insert(signature).second;
            claimed_seen_here.insert(signature);
          }
          if (seen) {
            // The run's values are the program's: hold none of them past the run (the vector keeps
            // its room for the next one).
            for (c10::IValue& v : values) v = c10::IValue();
            return;
          }
          const std::vector<c10::IValue> inputs = std::move(values);
          values.clear();
          try {
            // The values themselves, not copies: the check only writes them to disk (the child
            // processes read them back), so the subject still gets what it got, at no second copy.
            check_subject(subject, inputs);
          } catch (const std::exception& e) {
            const std::string what = e.what();  // torch's own messages go on with a backtrace
            const std::string line =
                "could not check subject " + std::to_string(subject) + ": " + what.substr(0, what.find('\n'));
            log_line(line);
            say(line);
          }
        },
        conservative()),
    torch::jit::Operator(
        "tsrepro_capture::subject_done(int subject) -> ()",
        [](torch::jit::Stack& stack) {
          const int64_t subject = torch::jit::pop(stack).toInt();
          if (kept_until_done.empty()) return;
          const auto kept = kept_until_done.find(subject);
          if (kept == kept_until_done.end()) return;
          remove_tree(kept->second);  // the program goes on whatever happens to the file
          kept_until_done.erase(kept);
        },
        conservative()),
});

// Before `first` (in its graph): the calls that hand `values` to subject `id` and then check it;
// before `end`: the call that says its run is over.
void insert_capture_calls(int64_t id, Node* first, Node* end, torch::jit::ArrayRef<torch::jit::Value*> values) {
  static const c10::Symbol input_op = c10::Symbol::fromQualString("tsrepro_capture::subject_input");
  static const c10::Symbol run_op = c10::Symbol::fromQualString("tsrepro_capture::subject_run");
  static const c10::Symbol done_op = c10::Symbol::fromQualString("tsrepro_capture::subject_done");
  Graph& owner = *first->owningGraph();
  {
    torch::jit::WithInsertPoint before(first);
    for (size_t i = 0; i < values.size(); ++i)
      owner.insertNode(owner.create(
          input_op, {owner.insertConstant(id), owner.insertConstant(static_cast<int64_t>(i)), values[i]}, 0));
    owner.insertNode(owner.create(run_op, {owner.insertConstant(id)}, 0));
  }
  torch::jit::WithInsertPoint before(end);
  owner.insertNode(owner.create(done_op, {owner.insertConstant(id)}, 0));
}

// TSREPRO_AFTER=fusion, a post pass: every fusion group of the optimized graph gets its calls.
void instrument_fusion_groups(std::shared_ptr<Graph>& graph) {
  std::vector<Node*> found;
  collect_fusion_groups(graph->block(), found);
  for (Node* group : found)
    insert_capture_calls(register_subject(group->kind().toQualString(), *group->g(c10::attr::Subgraph), true), group,
                         group->next(), group->inputs());
  // Said for every graph, none too: the log shows the capture saw the program's graphs.
  log_line("an optimized graph with " + std::to_string(found.size()) + " fusion group(s)");
}

bool holds_differentiable_graph(const torch::jit::Block* block) {
  for (const Node* node : block->nodes()) {
    if (node->kind() == c10::prim::DifferentiableGraph) return true;
    for (const torch::jit::Block* inner : node->blocks())
      if (holds_differentiable_graph(inner)) return true;
  }
  return false;
}

// TSREPRO_AFTER=graph, a pre pass: the graph before fusion is the subject, its calls at the entry.
void instrument_graph(std::shared_ptr<Graph>& graph) {
  std::shared_ptr<Graph> subject = graph->copy();
  torch::jit::RemoveProfileNodesAndSpecializeTypes(subject);
  if (holds_differentiable_graph(subject->block())) {
    // Autodiff's units are not a graph a case can hold: the graphs that need no gradient are.
    log_line("a graph with gradients (prim::DifferentiableGraph): not captured");
    return;
  }
  const int64_t id = register_subject("graph", *subject, false);
  insert_capture_calls(id, graph->nodes().front(), graph->return_node(), graph->inputs());
  log_line("an optimized graph: " + subject_name(id));
}

bool register_capture() {
  std::optional<Settings> s = settings_from_environment();
  if (!s) return false;
  settings() = *s;
  const bool fusion = s->after.stage == AfterSettings::Stage::Fusion;
  auto pass = [fusion](std::shared_ptr<Graph>& graph) {
    try {
      fusion ? instrument_fusion_groups(graph) : instrument_graph(graph);
    } catch (const std::exception& e) {
      const std::string what = e.what();
      say("could not instrument a graph: " + what.substr(0, what.find('\n')));
    }
  };
  fusion ? torch::jit::registerPostPass(pass) : torch::jit::registerPrePass(pass);
  return true;
}

[[maybe_unused]] const bool registered = register_capture();

}  // namespace
}  // namespace tsrepro::capture
