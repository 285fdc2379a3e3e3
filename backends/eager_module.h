#pragma once
// The case's graph as an eager PyTorch module: Python that runs as it is, without TorchScript.
// This is how PyTorch 2 takes a model (Dynamo traces it, torch.export(strict=False) runs it), so
// it is the PyTorch 2 backends' module route (backends/pt2_program.h) and the model of their
// repro.py on that route.
//
// The printer walks the graph itself, one statement per node (as FX's code reads):
//   - an op with a dispatcher kernel is torch.ops.<ns>.<op>.<overload>(...), the overload the
//     graph bound, so eager Python dispatches to the very kernel TorchScript ran (torch.ops.aten.X
//     without the overload would pick one by Python's argument types);
//   - TorchScript's builtins on lists, dicts, strings and numbers, and Tensor properties, are the
//     Python that means the same (backends/eager_spellings.def: `l.append(x)`, `d[k] = v`,
//     `list(x.size())`), in TorchScript's meaning where Python's operator differs;
//   - prim::If is an if statement, prim::Loop a for loop over range(trip count) that breaks when
//     its condition goes false, with the carried values as variables;
//   - the lifted inputs (parameters, buffers, flags) and the graph's tensor constants are the
//     module's attributes, read as self.<name>.
// Whether the Python means what the graph means is checked where it runs (the compile server runs
// it eagerly beside the TorchScript reference, runner/exec/evaluate.cpp): an op printed wrongly
// shows there as a defect of tsrepro, never as a compiler's verdict.

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

namespace torch::jit {
struct Graph;
struct Value;
}  // namespace torch::jit

namespace tsrepro {

// self.<name> of a module: a lifted input's debug name as an identifier (squeeze_weight) that no
// Python keyword and no torch.nn.Module member has, unique among `used` (which it joins).
std::string module_attribute_name(const torch::jit::Value* input, std::set<std::string>& used);

// An attribute of the eager module: a lifted input of the graph, or a tensor constant of it.
struct EagerAttribute {
  std::string name;
  std::optional<size_t> input;  // the graph input it holds (its value is the case's)
  c10::IValue constant;         // else: the constant's value
  bool training_flag = false;   // a submodule's `training` (bn1_training)
};

struct EagerModule {
  std::vector<EagerAttribute> attributes;
  std::vector<size_t> forward_inputs;  // the graph inputs forward takes, in order
  bool packed = false;                 // several graph outputs, returned as one tuple
  // `    def forward(self, ...):` and its body, indented to sit inside a class; after it, a method
  // per outermost loop (`def loop_N(self, <the locals it reads>)`), which forward calls.
  std::string forward;
  std::vector<std::string> imports;  // modules forward uses besides torch: "math", "warnings"
  std::string refused;               // non-empty: why the graph has no eager form (the rest is empty)
};

// `lifted` flags the graph inputs that are the module's state.
EagerModule eager_module(const torch::jit::Graph& graph, const std::vector<bool>& lifted);

// A Python file defining `class Repro(torch.nn.Module)` with that forward and no __init__: whoever
// instantiates it sets the attributes (the compile server from the case's values).
std::string eager_module_file(const EagerModule& module);

}  // namespace tsrepro
