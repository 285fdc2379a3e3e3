#pragma once
// A backend executes a graph on inputs: the reference (`eager`) or a tested one (`jit`, `nnc`,
// `ofi`, `inject:<fault>@<op>`). Adding one is one folder, backends/<id>/, plus one line in
// backends/backends.def (docs/ARCHITECTURE.md, "Adding a backend").

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

namespace torch::jit {
struct Graph;
struct Module;
}  // namespace torch::jit

namespace tsrepro {

using BackendOptions = std::map<std::string, std::string>;

// What a backend gets: the graph and, for each input, whether it was a lifted constant
// (a freezing backend folds those back into the graph).
struct BackendInput {
  std::shared_ptr<torch::jit::Graph> graph;
  std::vector<bool> lifted;
};

// The phases a failure is attributed to. A backend throws from prepare() for compile errors
// and from run() for runtime errors.
class PreparedGraph {
 public:
  virtual ~PreparedGraph() = default;
  // Runs on a fresh copy of the inputs; returns the graph's outputs (one per graph output).
  virtual std::vector<c10::IValue> run(std::vector<c10::IValue> inputs) = 0;
  // The graph that really executed last (after the backend's passes), for --explain-backend.
  virtual std::string executed_graph() const = 0;
  // The same graph as an object, for tools that look inside it (TSREPRO_AFTER=fusion finds the
  // fusion groups there); available after prepare(). Null for backends without one.
  virtual std::shared_ptr<torch::jit::Graph> optimized_graph() const { return nullptr; }
};

// The stages and subsystems of a compile that PyTorch's CompilerBisector can switch
// (torch/_inductor/compiler_bisector.py), as a PyTorch 2 backend reports them.
struct CompilerBisectPlan {
  std::vector<std::string> stages;  // run instead of the backend, earliest first (aot_eager, ...)
  std::string last;                 // the backend's own stage, in CompilerBisector's name (inductor)
  struct Subsystem {
    std::string stage, name;  // as CompilerBisector keys it (TORCH_BISECT_BACKEND, _SUBSYSTEM)
    bool counted = false;     // its applications are counted and kept to a first few; else a config change
    std::string within;       // the stage of the plan whose compile it is tried in (mostly `stage`)
  };
  std::vector<Subsystem> subsystems;                     // each stage's, in CompilerBisector's order
  std::map<std::string, std::string> texts;              // what each stage is, for people (a finding's words)
  std::map<std::string, std::string> application_texts;  // a counted subsystem's: the words before its debug info
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Compiles: everything that happens before the first real run. `sample_inputs` lets
  // profiling backends warm up (profile, then optimize); prepare() may run the graph on them.
  virtual std::unique_ptr<PreparedGraph> prepare(const BackendInput& input,
                                                 const std::vector<c10::IValue>& sample_inputs) = 0;
  // The model as this backend receives it, run as it is, uncompiled: the PyTorch 2 backends'
  // module route runs its eager Python (backends/pt2_program.h). Asked before prepare(); its
  // outputs must agree with the reference's before the backend's verdict counts, else tsrepro
  // itself is at fault (runner/exec/evaluate.cpp). nullopt for a backend that takes the graph
  // itself (the default). Throws UserError where the graph cannot be given to it that way.
  virtual std::optional<std::vector<c10::IValue>> run_received_model(const BackendInput& input,
                                                                     const std::vector<c10::IValue>& sample_inputs) {
    (void)input, (void)sample_inputs;
    return std::nullopt;
  }
  // The public calls a program makes on the saved model itself (torch.jit.load, then what users
  // of this backend call on the module): what `tsrepro import --verify` judges the case against.
  // The PreparedGraph's run() takes forward's arguments and returns its one value. Throws
  // UserError for a backend that has no such calls (the default).
  virtual std::unique_ptr<PreparedGraph> prepare_module(const torch::jit::Module& module,
                                                        const std::vector<c10::IValue>& sample_inputs);
  // Whether prepare_module gives the saved model the way in that prepare() gives the case. Not so
  // for a PyTorch 2 backend on the module route: a saved model has no eager module form (it reaches
  // PyTorch 2 by the converter only), and the case's route check stands for it.
  virtual bool takes_saved_model_as_case() const { return true; }
  // Whether prepare() compiles without running the graph (PyTorch 2's compilers, minutes for a
  // large model): its time is bounded by RunSpec::compile_timeout_seconds instead of the run's
  // timeout. Not so where preparing runs the graph (the profiling executor's warm-up runs, which
  // can hang as the compiled code does).
  virtual bool compiles_ahead_of_time() const { return false; }
  // The passes it applies to `input`, in order, each application once (a pass a fixpoint loop runs
  // again is listed again): its option passes=K stops after the first K of them, and `tsrepro
  // explain --passes` asks each K. Empty (the default): tsrepro cannot stop between its passes.
  virtual std::vector<std::string> pass_applications(const BackendInput& input,
                                                     const std::vector<c10::IValue>& sample_inputs) {
    (void)input, (void)sample_inputs;
    return {};
  }
  // How PyTorch's CompilerBisector splits this backend's compile (the PyTorch 2 backends: their
  // option bisect=STAGE[:SUBSYSTEM:KEEP], backends/pt2_compile_server.py's CompilerBisect), for
  // `tsrepro explain --passes`; nullopt (the default): it has no such split. Under bisect=STAGE:
  // SUBSYSTEM:all, pass_applications lists what that subsystem did, one entry per application.
  virtual std::optional<CompilerBisectPlan> compiler_bisect_plan() { return std::nullopt; }
  // Checks the options against the compiler they are for, where their syntax alone cannot tell (a
  // torch._inductor.config key against the torch in use): UserError naming the option. For
  // check_backend, once per command before any case runs; the default has nothing to check.
  virtual void check_options_with_compiler() const {}
};

struct BackendInfo {
  std::string name;      // "nnc", or "inject" for the inject:<fault>@<op> family
  std::string spelling;  // as help and errors show it: "nnc", "inject:<fault>@<op>"
  std::string description;
  std::vector<std::string> option_keys;  // what --backend-opt accepts
  std::function<std::unique_ptr<Backend>(const std::string& spec, const BackendOptions&)> make;
  std::string issue_label;  // "[JIT][NNC]": how a PyTorch issue title about it starts
  std::string under;        // "the TensorExpr fuser": "... returns wrong values under <under>"
};

// The table of backends/backends.def.
const std::vector<BackendInfo>& backend_registry();
// The entry a spec ("nnc", "inject:segfault@aten::relu") belongs to; null when none.
const BackendInfo* find_backend(const std::string& spec);
// "eager, jit, nnc, ofi, inject:<fault>@<op>": for help texts and errors.
std::string known_backends_text();

// Parses a spec like "nnc" or "inject:segfault@aten::relu" and checks the options.
// Throws UserError on an unknown backend or option.
std::unique_ptr<Backend> make_backend(const std::string& spec, const BackendOptions& options);

// The one check of a backend and its options before a command runs anything (RunSpec::validate,
// `tsrepro sweep`, `tsrepro after`): make_backend's, then the compiler's own
// (Backend::check_options_with_compiler). Throws UserError naming what is wrong.
void check_backend(const std::string& spec, const BackendOptions& options);

// Deep copy: tensors cloned (keeping strides), tuples, lists and dicts rebuilt, so runs cannot see each
// other's in-place mutations.
std::vector<c10::IValue> clone_values(const std::vector<c10::IValue>& values);

// The values a run gets: deep copies of those marked in `written` (inputs_maybe_written of the
// graph, runner/graph/written_inputs.h), the others as they are (tensors as fresh leaves on the same
// storage, requires_grad kept).
std::vector<c10::IValue> fresh_copies(const std::vector<c10::IValue>& values, const std::vector<bool>& written);

}  // namespace tsrepro
