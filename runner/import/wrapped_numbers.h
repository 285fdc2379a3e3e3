#pragma once
// Python numbers that tracing recorded as tensors, written as the numbers again.
//
// `x.sum() * 2.5` in eager passes 2.5 to aten::mul as a *wrapped number*: a 0-dim float64 tensor
// flagged so that type promotion treats it as a Python scalar (the result stays float32). Tracing
// records it as a 0-dim tensor constant, and torch.jit.save drops the flag: loaded again, the
// unoptimized interpreter promotes float32 * float64 (both 0-dim) to float64, where eager, and the
// optimizing executor (CanonicalizeOps writes such constants as scalars), give float32. A case's
// reference is the interpreter, and it must mean what eager means, so import writes each use of
// such a constant as the number itself where the operator has an overload taking a Scalar there
// (aten::mul(Tensor, Scalar) for aten::mul(Tensor, Tensor)): ATen's Scalar overloads wrap the
// number exactly as eager did, so values and dtypes are eager's. A use without such an overload
// keeps the tensor (lifted to an input, as every tensor constant is).
//
// Which constants stand for a Python number: a 0-dim CPU tensor flagged as a wrapped number (a
// module still in memory, as the capture library sees it), or, since archives drop the flag, a
// 0-dim CPU tensor without gradient of a dtype Python numbers wrap into (float64, int64,
// complex128, bool). A 0-dim float64 tensor that the model made itself with torch.tensor and
// combined with another 0-dim tensor is taken for a number too; the promotion then differs from
// eager's (float32, not float64), as it does in torch's own optimizing executor.

#include <cstddef>

namespace torch::jit {
struct Graph;
}

namespace tsrepro {

// Rewrites, in place, the uses of wrapped-number constants described above; returns how many.
std::size_t write_wrapped_numbers_as_scalars(torch::jit::Graph& graph);

}  // namespace tsrepro
