#pragma once
// TSREPRO_AFTER=fusion: the fusion groups a backend formed (the graphs its code generator
// lowers), the real values that flowed into each, and a check of each group on its own.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

#include "tsrepro/compare.h"
#include "tsrepro/verdict.h"

namespace torch::jit {
struct Graph;
struct Node;
}  // namespace torch::jit

namespace tsrepro {

struct FusionGroup {
  std::string kind;                             // "prim::TensorExprGroup", ...
  std::shared_ptr<torch::jit::Graph> subgraph;  // what the code generator lowers
  std::vector<c10::IValue> inputs;              // the values that flowed in when the program ran
  torch::jit::Node* node = nullptr;             // the group node, in `owner`
  std::shared_ptr<torch::jit::Graph> owner;     // a copy of the optimized graph, kept alive for `node`
};

// Every fusion group of `optimized` (nested blocks included), each with the inputs it got when
// the optimized graph ran on `graph_inputs` in the interpreter. A group that did not run (a
// guard sent the run to the fallback) is left out.
std::vector<FusionGroup> fusion_groups_with_inputs(const std::shared_ptr<torch::jit::Graph>& optimized,
                                                   const std::vector<c10::IValue>& graph_inputs);

// Runs the group's compiled kernel (a graph holding just the group node, so the fuser's own
// operator compiles and runs it) against its subgraph in the interpreter. nullopt when they
// agree; otherwise the failure: an exception from the kernel, or (with compare_accuracy) an
// accuracy verdict under same()-style tolerances.
std::optional<Verdict> check_fusion_group(const FusionGroup& group, bool compare_accuracy,
                                          const CompareOptions& options);

}  // namespace tsrepro
