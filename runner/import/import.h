#pragma once
// `tsrepro import`: turn a saved TorchScript module or an IR file plus inputs into a Case.

#include <memory>
#include <string>
#include <vector>

#include "runner/case/input_spec_text.h"  // parse_input_spec, which import uses
#include "tsrepro/case.h"
#include "tsrepro/run_spec.h"

namespace torch::jit {
struct Module;
}

namespace tsrepro {

struct ImportOptions {
  std::string source;  // MODEL.pt (torch.jit.save archive) or GRAPH.ir (IR text)
  std::string method = "forward";
  std::string inputs_path;  // INPUTS.pt written by Python's torch.save; empty with input_spec
  std::string input_spec;   // "1x3x8x8:float32,4:int64[0,10)": fake-shaped inputs only
  // ORIGINS.json: the nodes' origins as read where the graph ran (libtsrepro_capture.so writes it
  // beside a captured graph.ir, whose text keeps no source). Used in place of the imported
  // file's own when it names the graph's compute nodes' kinds in order; case.json's provenance
  // says whether it was.
  std::string origins_path{};  // (an initializer: aggregate initializations may leave it out)
};

// Throws UserError naming the file at fault.
Case import_case(const ImportOptions& options);

// A module already in memory, as import sees it: the method inlined, then its parameters,
// buffers, attribute tensors and tensor constants as trailing graph inputs (specs marked
// lifted), after the method's own inputs. `origin` names the module in errors.
struct ModuleGraph {
  std::shared_ptr<torch::jit::Graph> graph;
  std::vector<InputSpec> trailing_specs;
  std::vector<c10::IValue> trailing_values;
};
ModuleGraph module_graph(const torch::jit::Module& module, const std::string& method, const std::string& origin);

class RunnerProcess;

// Runs the case once in the interpreter, in a worker process (a dtype that does not fit can
// crash libtorch), and throws UserError("<origin>: the inputs do not fit the graph (...)") when
// it fails. Loaded graphs rarely record dtypes, so this is the only honest check. A run past
// `timeout_seconds` (import's --timeout, run's default) is refused too: an endless prim::Loop
// would otherwise hold import forever. With `model_path` (the case was imported from that saved
// module), a run that raises is held against the model's own unoptimized run on the same inputs:
// when the model raises the same error, the case is the model and is accepted, its provenance
// saying so ("reference_fails"); when not, the error says that import changed the model.
void check_inputs_run(Case& c, const std::string& origin, RunnerProcess& runner,
                      double timeout_seconds = RunSpec{}.timeout_seconds, const std::string& model_path = "");

// Turns every tensor-valued prim::Constant into a new graph input (parseIR cannot read tensor
// constants back); appends their specs and values, marked lifted.
void lift_tensor_constants(Case& c);

}  // namespace tsrepro
