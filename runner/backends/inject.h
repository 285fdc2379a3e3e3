#pragma once
// What the inject:<fault>@<op> test backend does to a graph, for writers that reproduce it
// without tsrepro (repro.py states the fault in a few lines instead of carrying the backend).

#include <memory>
#include <string>

#include <torch/csrc/jit/ir/ir.h>

namespace tsrepro {

struct InjectPlan {
  std::string fault;                         // compile-error, runtime-error, accuracy, abort, segfault, hang
  std::string op_text;                       // "aten::relu+aten::tanh"
  bool triggered = false;                    // every listed op is in the graph: the fault fires
  std::shared_ptr<torch::jit::Graph> graph;  // what the interpreter runs (the accuracy fault's +1 applied)
};

// Throws UserError on a malformed spec, as --backend does.
InjectPlan plan_inject(const std::string& spec, torch::jit::Graph& graph);

}  // namespace tsrepro
