// canonical_form: a graph printed without what differs between models sharing a bug.

#include "sweep/canonical_form.h"

#include <sstream>
#include <unordered_map>

namespace tsrepro {
namespace {

// "Tensor(Float)", "int", "Tensor[]": the kind of a type and a tensor's dtype, never its shape.
std::string type_text(const c10::TypePtr& type) {
  if (auto tensor = type->cast<c10::TensorType>())
    return tensor->scalarType() ? "Tensor(" + std::string(c10::toString(*tensor->scalarType())) + ")" : "Tensor";
  return type->annotation_str();
}

class Printer {
 public:
  std::string print(const torch::jit::Graph& graph) {
    out_ << "graph(";
    for (const torch::jit::Value* input : graph.inputs()) out_ << name(input) << ":" << type_text(input->type()) << " ";
    out_ << ")\n";
    print_block(*graph.block(), 1);
    return out_.str();
  }

 private:
  std::string name(const torch::jit::Value* v) {
    auto [it, fresh] = ids_.emplace(v, ids_.size());
    return "%" + std::to_string(it->second);
  }

  void print_block(const torch::jit::Block& block, int depth) {
    if (depth > 1) {  // a loop's or branch's own inputs
      out_ << std::string(2 * depth, ' ') << "block(";
      for (const torch::jit::Value* input : block.inputs())
        out_ << name(input) << ":" << type_text(input->type()) << " ";
      out_ << ")\n";
    }
    for (const torch::jit::Node* node : block.nodes()) {
      out_ << std::string(2 * depth, ' ');
      for (const torch::jit::Value* output : node->outputs())
        out_ << name(output) << ":" << type_text(output->type()) << " ";
      out_ << "= " << node->kind().toQualString() << "(";
      for (const torch::jit::Value* input : node->inputs()) out_ << name(input) << " ";
      out_ << ")\n";
      for (const torch::jit::Block* inner : node->blocks()) print_block(*inner, depth + 1);
    }
    out_ << std::string(2 * depth, ' ') << "return(";
    for (const torch::jit::Value* output : block.outputs()) out_ << name(output) << " ";
    out_ << ")\n";
  }

  std::ostringstream out_;
  std::unordered_map<const torch::jit::Value*, size_t> ids_;
};

}  // namespace

std::string canonical_form(const torch::jit::Graph& graph) { return Printer().print(graph); }

}  // namespace tsrepro
