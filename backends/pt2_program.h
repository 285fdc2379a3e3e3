#pragma once
// What the PyTorch 2 backends share (export, inductor, aoti: backends/<id>/backend.cpp and their
// compile.py): the case handed to a Python compile server (backends/pt2_compile_server.py) by one
// of two routes, compiled there by the backend's backends/<id>/compile.py.
//   module     the case's eager module form (backends/eager_module.h), Python with no
//              TorchScript in it, the way a model written in Python reaches PyTorch 2:
//              torch.compile takes the module, torch.export.export(strict=False) traces it.
//              Before a verdict counts, the module run eagerly must agree with the TorchScript
//              reference (runner/exec/evaluate.cpp): where it does not, tsrepro printed it wrongly.
//   converter  the case as a torch::jit::Module through PyTorch's TorchScript converter
//              (TS2EPConverter): what a TorchScript user migrating to torch.export gets.
// `--backend-opt route=module|converter` chooses; inductor and aoti take the module route by
// default, export the converter (it judges that migration itself). One server per worker process,
// started on the first request, started again when it died, killed with the worker; compiled
// programs stay in it under a key made of the model, its state, the inputs' types, the backend
// and its options, and a program it holds is not sent again.
//
// Only a libtorch 2.x build has these backends (its Python's torch must be the same line: Debian
// 13's python3-torch 2.6 beside libtorch-dev 2.6); on 1.13 their factories refuse with one line.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/eager_module.h"
#include "tsrepro/backend.h"

namespace tsrepro {

// Throws UserError saying what `--backend BACKEND` needs, where this build is not libtorch 2.x.
void require_pytorch2(const std::string& backend);

// The Python whose torch compiles: $TSREPRO_PYTHON, else Debian's (the one python3-torch serves).
std::string pt2_python_executable();

enum class Pt2Route { Module, Converter };

// The route `options` ask for ("route"), or `fallback`; throws UserError for another word.
Pt2Route pt2_route(const BackendOptions& options, Pt2Route fallback);

// How the module route makes torch.export's program (aoti, and export with route=module), the
// option `export`:
//   default  torch.export.export(strict=False);
//   draft    torch.export's draft_export: where a data-dependent guard (a box count, a sequence
//            length: GuardOnDataDependentSymNode) stops export, it decides the guard by the inputs'
//            real values and writes it into the program as a runtime check; that program's module
//            is exported again (backends/pt2_compile_server.py says why). The program then holds
//            for inputs like the case's, which is what a verdict on the case's inputs needs; it is
//            PyTorch's own way past those guards.
// Whether `options` ask for draft; throws UserError for another word, or for draft on the
// converter route (the converter makes its program itself).
bool pt2_draft_export(const BackendOptions& options, Pt2Route route);

// `server_options` with the export choice of `options` added, as the compile server reads it.
BackendOptions with_export_option(BackendOptions server_options, const BackendOptions& options, Pt2Route route);

// A case compiled by the server.
struct Pt2Compilation {
  std::string key;                        // the server's name for it
  std::string package;                    // aoti: the .pt2 file aoti_compile_and_package wrote
  bool packed = false;                    // the module returns the graph's several outputs as one tuple
  std::vector<bool> lifted;               // which of run()'s inputs the module holds (none for a saved model)
  std::string captured;                   // inductor: what Dynamo captured of the model (graphs, ops, breaks)
  std::vector<std::string> applications;  // under bisect=STAGE:SUBSYSTEM:KEEP, what the subsystem did
};

// One candidate on its way into a PyTorch 2 backend: the model the route makes of it, its key,
// and the files the server reads (written only where the server does not hold the program yet).
class Pt2Case {
 public:
  // `route_is_the_subject`: the backend judges the route itself (export): a failure there is its
  // compile failure, not a RouteFailure.
  Pt2Case(std::string backend, BackendOptions options, Pt2Route route, bool route_is_the_subject,
          const BackendInput& input, const std::vector<c10::IValue>& sample);

  const torch::jit::Graph* graph() const { return graph_; }
  Pt2Route route() const { return route_; }
  // What run_eager returned, once it ran.
  const std::optional<std::vector<c10::IValue>>& eager_outputs() const { return eager_outputs_; }
  // The module route's model run eagerly on the sample, uncompiled: its outputs, one per graph
  // output. nullopt on the converter route. Throws UserError where the graph has no eager form.
  std::optional<std::vector<c10::IValue>> run_eager();
  // Compiles: throws RouteFailure where the route failed, ForeignError where the compiler did.
  Pt2Compilation compile();
  // Under bisect=STAGE:SUBSYSTEM:KEEP, what the subsystem did while compiling, whether or not the
  // compile failed (a compile error's applications count as well).
  std::vector<std::string> subsystem_applications();

 private:
  void write_model_files();
  // The compile request's answer, unchecked.
  nlohmann::json ask_compile();
  std::vector<std::string> attribute_names() const;

  std::string backend_;
  BackendOptions options_;
  Pt2Route route_;
  bool route_is_the_subject_;
  const torch::jit::Graph* graph_;
  BackendInput input_;
  std::vector<c10::IValue> sample_;
  std::string key_;
  EagerModule eager_;  // the module route's model
  std::optional<std::vector<c10::IValue>> eager_outputs_;
  bool packed_ = false;
  bool files_written_ = false;
};

// The same for a saved model itself (`import --verify`), given forward's arguments: the converter
// route, since tsrepro has no Python source of a saved model.
Pt2Compilation compile_saved_model(const std::string& backend, const BackendOptions& options,
                                   const torch::jit::Module& module, const std::vector<c10::IValue>& forward_sample);

// A compilation the server itself runs (export, inductor): run() sends it the forward inputs.
std::unique_ptr<PreparedGraph> run_in_python(Pt2Compilation compilation);

// A module's return value as the graph's outputs: a tuple's elements where it packed several.
std::vector<c10::IValue> graph_outputs(const c10::IValue& returned, bool packed);

// What inductor, aoti and export share as Backends: the route, and the candidate between its eager
// run (run_received_model) and its compile (prepare), which judge() asks for in that order.
class Pt2Backend : public Backend {
 public:
  Pt2Backend(std::string id, BackendOptions server_options, Pt2Route route, bool route_is_the_subject)
      : id_(std::move(id)),
        options_(std::move(server_options)),
        route_(route),
        route_is_the_subject_(route_is_the_subject) {}
  std::string name() const override { return id_; }
  // The candidate compiled by the backend's compile.py and run by the server (aoti runs its
  // package itself).
  std::unique_ptr<PreparedGraph> prepare(const BackendInput& input, const std::vector<c10::IValue>& sample) override;
  // A saved model, by the converter route.
  std::unique_ptr<PreparedGraph> prepare_module(const torch::jit::Module& module,
                                                const std::vector<c10::IValue>& sample) override;
  std::optional<std::vector<c10::IValue>> run_received_model(const BackendInput& input,
                                                             const std::vector<c10::IValue>& sample) override;
  bool takes_saved_model_as_case() const override { return route_ == Pt2Route::Converter; }
  bool compiles_ahead_of_time() const override { return true; }
  // The config entries against the torch._inductor.config in use (backends/inductor_config_check.h).
  void check_options_with_compiler() const override;
  // The backend's compile.py's bisect_plan(), asked of the compile server.
  std::optional<CompilerBisectPlan> compiler_bisect_plan() override;
  // Under bisect=STAGE:SUBSYSTEM:all, the subsystem's applications in the compile of `input`;
  // otherwise none (tsrepro stops between these backends' passes only through CompilerBisector).
  std::vector<std::string> pass_applications(const BackendInput& input,
                                             const std::vector<c10::IValue>& sample) override;

 protected:
  // The candidate of `input`: the one run_received_model made for the same graph, or a new one.
  Pt2Case& pt2_case(const BackendInput& input, const std::vector<c10::IValue>& sample);
  const BackendOptions& options() const { return options_; }
  Pt2Route route() const { return route_; }

 private:
  std::string id_;
  BackendOptions options_;  // as the compile server reads them
  Pt2Route route_;
  bool route_is_the_subject_;
  std::unique_ptr<Pt2Case> last_;
};

}  // namespace tsrepro
