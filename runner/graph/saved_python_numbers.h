#pragma once
// Python floats of a traced model, as eager has them again after torch.jit.save and load.
//
// Tracing `x + 1.5` records 1.5 as a 0-dim float64 tensor constant flagged as a *wrapped number*,
// which type promotion treats as a Python scalar: on an int8 x the result is float32, as in eager.
// torch.jit.save drops the flag. TorchScript's interpreter, run unoptimized, then promotes the
// loaded constant as a tensor (float64), while eager and every stock backend give float32 (the
// profiling executor's passes turn such a constant into a Scalar argument). A case's reference
// must mean what eager means, so tsrepro flags such constants again where it loads a model: import
// (which then writes their uses as Scalar arguments, runner/import/wrapped_numbers.h) and the
// saved model's own runs (`import --verify`, `run` of a saved model).
//
// Which constants: a 0-dim CPU tensor of dtype float64 or complex128 without grad, the form a
// Python float or complex takes in a trace; only there does the flag change a result (an integer
// or bool tensor meeting it). A real 0-dim float64 tensor baked into a trace (a
// `torch.tensor(1.5, dtype=torch.float64)` made in forward) looks the same and would be read as a
// Python float too: the trace itself does not tell them apart.

#include <cstddef>

namespace torch::jit {
struct Graph;
struct Module;
}  // namespace torch::jit

namespace tsrepro {

// Flags such constants of `graph` (nested blocks included), in place; returns how many.
std::size_t flag_saved_python_numbers(torch::jit::Graph& graph);

// The same for every method of `module` and its submodules.
std::size_t flag_saved_python_numbers(const torch::jit::Module& module);

}  // namespace tsrepro
