#pragma once
// The workflow's accuracy check (level 4, and fusion groups): a result against the interpreter's
// run of the same graph, with same()'s rule (fp64 reference where the graph runs in fp64).

#include <memory>
#include <optional>
#include <vector>

#include <ATen/core/ivalue.h>

#include "tsrepro/compare.h"
#include "tsrepro/verdict.h"

namespace torch::jit {
struct Graph;
}

namespace tsrepro {

// nullopt when `got` passes against `graph` interpreted on `inputs`; else an accuracy verdict
// whose signature is the one the runner would give.
std::optional<Verdict> accuracy_failure(const std::shared_ptr<torch::jit::Graph>& graph,
                                        const std::vector<c10::IValue>& inputs, const std::vector<c10::IValue>& got,
                                        const CompareOptions& options = {});

}  // namespace tsrepro
