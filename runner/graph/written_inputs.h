#pragma once
// Which graph inputs a run may write to. Every run of a candidate (reference and backend,
// prepare and run, each profiling run) must start from the same input values, so inputs that
// an in-place op may change get a fresh copy per run; the others can be shared by all runs. A
// model's parameters are never written, and copying them for every run was most of a worker's
// memory on a real model.
//
// Not AliasDb::hasWriters: alias analysis treats all tensor inputs of a graph as one alias set,
// so one written input (a batch norm's num_batches_tracked) would mark every parameter.

#include <vector>

namespace torch::jit {
struct Graph;
}

namespace tsrepro {

// For each graph input: false only where no node can write to it or to anything that may alias
// it (a view of it, a list holding it). Conservative: an op of unknown aliasing, or one whose
// schema lets it write an argument, counts as writing everything that argument may hold.
std::vector<bool> inputs_maybe_written(const torch::jit::Graph& graph);

}  // namespace tsrepro
