#pragma once
// Input values for a run: the real ones from inputs.pt, or fake ones made from the specs.

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <c10/core/ScalarType.h>

#include "runner/graph/ivalue_tensors.h"
#include "tsrepro/case.h"
#include "tsrepro/run_spec.h"  // kDefaultFakeSeed

namespace tsrepro {

// Accepts PyTorch's names with or without "torch.": float32/float, float64/double, int64/long...
// Throws UserError("<origin>: unknown dtype 'x'").
c10::ScalarType scalar_type_from_name(const std::string& name, const std::string& origin);

// A deterministic fake value for one spec: tensor i is drawn from a CPU generator seeded with
// seed + i (floats uniform in [min, max], integers uniform in [min, max], bools 0/1), with the
// recorded dtype, sizes and (where dense) strides. Scalars keep their recorded value.
// repro.py makes the same values with torch.Generator().manual_seed(seed + i).
// How make_fake_value draws a tensor spec: its dtype, whether the recorded strides are kept
// (only dense ones can be), and the range [lo, hi] (floats uniform; integers from ceil(lo) to
// floor(hi); bools 0/1). repro.py's fake() takes exactly these.
struct FakeTensorRecipe {
  c10::ScalarType dtype = c10::ScalarType::Float;
  bool keep_strides = false;
  double lo = -1, hi = 1;
};
FakeTensorRecipe fake_tensor_recipe(const InputSpec& spec);

c10::IValue make_fake_value(const InputSpec& spec, uint64_t seed, size_t index);
std::vector<c10::IValue> make_fake_inputs(const std::vector<InputSpec>& specs, uint64_t seed);

// Which inputs get gradients when gradients are asked for (--backward, tsrepro explain): the
// graph's own inputs and the lifted parameters that required grad, not buffers or attributes.
std::vector<bool> gradient_inputs(const std::vector<InputSpec>& specs);

// `values` with each floating-point tensor at a position marked in `with_grad` made a fresh leaf
// (same storage) that requires grad.
std::vector<c10::IValue> with_grad_leaves(std::vector<c10::IValue> values, const std::vector<bool>& with_grad);

// The values the inputs.pt of a user (or a case) holds, as one value per graph input:
// a tuple or list is spread, a single tensor is one input.
std::vector<c10::IValue> read_input_values(const std::string& path);

// Gives lists, tuples and dicts read from a pickle (List[Any]...) the element types the graph's
// inputs declare, as a Python call into TorchScript would.
void conform_to_graph_inputs(std::vector<c10::IValue>& values, const torch::jit::Graph& graph);

// Moves tensors (nested in tuples/lists too) to `device`.
std::vector<c10::IValue> values_to_device(const std::vector<c10::IValue>& values, const c10::Device& device);

// Points every Device constant of the graph (nested blocks too) at `device`.
void graph_constants_to_device(torch::jit::Graph& graph, const c10::Device& device);

// Throws UserError("<origin>: ...") when `values` do not fit the graph's first inputs:
// count, Tensor vs scalar, and dtype where the graph records one (traced graphs do).
void check_values_fit_graph(const torch::jit::Graph& graph, size_t user_input_count,
                            const std::vector<c10::IValue>& values, const std::string& origin);

}  // namespace tsrepro
