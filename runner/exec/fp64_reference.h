#pragma once
// The float64 reference run that same() uses to excuse float32 noise, made to fit in memory.
//
// Casting every input up front holds a float64 copy of every parameter at once: twice the
// parameters' bytes on top of the float32 ones (90 MB on resnet18, more than the whole
// minify's memory bound). Instead each floating tensor input is cast inside the graph, by an
// aten::to right before the first top-level node that uses it; the interpreter frees a value
// after its last use, so a run holds the float64 copies of about one parameter at a time.
// The values are the same either way: a float32 -> float64 cast is exact.

#include <vector>

#include "tsrepro/backend.h"

namespace tsrepro {

struct Fp64Reference {
  BackendInput input;               // the graph with its casts
  std::vector<c10::IValue> inputs;  // the values to run it on
};

// The graph and values of the float64 reference. Inputs whose gradient is wanted (`with_grad`)
// and tensors inside containers are still cast up front: a gradient must come back in float64
// and to the leaf the run is given, and a container's type cannot be cast by one op.
Fp64Reference fp64_reference(const BackendInput& input, const std::vector<c10::IValue>& inputs,
                             const std::vector<bool>& with_grad);

}  // namespace tsrepro
