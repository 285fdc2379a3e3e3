#pragma once
// What the inject:<fault>@<op> test backend does to a graph, for writers that reproduce it
// without tsrepro (repro.py states the fault in a few lines instead of carrying the backend).

#include <memory>
#include <string>

#include <torch/csrc/jit/ir/ir.h>

namespace tsrepro {

struct InjectPlan {
  std::string fault;                         // compile-error, ..., backward-accuracy, backward-error
  std::string op_text;                       // "aten::relu+aten::tanh"
  bool triggered = false;                    // every listed op is in the graph: the fault fires
  std::shared_ptr<torch::jit::Graph> graph;  // what the interpreter runs (the fault's graph edit applied)
};

// What a triggered fault's graph edit does to the first listed op, for the writers' comments.
std::string inject_edit_text(const std::string& fault);

// The RuntimeError message of a compile-error or runtime-error fault at `op_text`: the backend
// raises it, the reproducers raise the same.
inline std::string inject_error_message(const std::string& fault, const std::string& op_text) {
  return std::string("tsrepro injected ") + (fault == "compile-error" ? "compile" : "runtime") + " error at " + op_text;
}

// Whether `spec` names the inject test backend ("inject:segfault@aten::relu").
inline bool is_inject_spec(const std::string& spec) { return spec.rfind("inject:", 0) == 0 || spec == "inject"; }

// Throws UserError on a malformed spec, as --backend does.
InjectPlan plan_inject(const std::string& spec, torch::jit::Graph& graph);

}  // namespace tsrepro
