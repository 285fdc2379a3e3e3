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
// Import does this too, once it has flagged again the constants a trace made of Python floats,
// whose flag torch.jit.save dropped (runner/graph/saved_python_numbers.h): the case's reference
// then gives what eager gives (float32 above), as the saved model's own runs do with the same flags.

#include <cstddef>

namespace torch::jit {
struct Graph;
}

namespace tsrepro {

// Rewrites, in place, the uses of flagged wrapped-number constants described above; returns how many.
std::size_t write_wrapped_numbers_as_scalars(torch::jit::Graph& graph);

}  // namespace tsrepro
