#pragma once
// Python numbers in a graph held in memory, written as the numbers for a case made of it.
//
// `x.sum() * 2.5` in eager passes 2.5 to aten::mul as a *wrapped number*: a 0-dim float64 tensor
// flagged so that type promotion treats it as a Python scalar (the result stays float32). Tracing
// records it as a 0-dim tensor constant that keeps the flag while the module is in memory. The
// capture library makes cases of graphs in memory, as IR text plus a file of values, and neither
// can hold the flag: there each use of a flagged constant is written as the number itself where
// the operator has an overload taking a Scalar there (aten::mul(Tensor, Scalar) for
// aten::mul(Tensor, Tensor)). ATen's Scalar overloads wrap the number exactly as the flag did, so
// values and dtypes are the program's. A use without such an overload keeps the tensor.
//
// Import does not do this: torch.jit.save drops the flag, and a loaded model's own runs promote
// the unflagged tensor (its unoptimized run gives float64 above, its optimized one float32, after
// CanonicalizeOps): the case keeps the constant as the model has it (runner/case/constant_inputs.h).

#include <cstddef>

namespace torch::jit {
struct Graph;
}

namespace tsrepro {

// Rewrites, in place, the uses of flagged wrapped-number constants described above; returns how many.
std::size_t write_wrapped_numbers_as_scalars(torch::jit::Graph& graph);

}  // namespace tsrepro
