// Cases for the library tests.

#include "tests/support/cases.h"

#include <fstream>

#include <torch/script.h>

#include "minifier/graph_edit.h"
#include "runner/import/import.h"

namespace tsrepro_test {

nlohmann::json example_manifest() {
  std::ifstream in(model_path("MANIFEST.json"));
  return nlohmann::json::parse(in);
}

Case example_case(const std::string& name) {
  const bool ir = name == "small_graph";
  return tsrepro::import_case(
      {model_path(name + (ir ? ".ir" : ".pt")), "forward", model_path(name + ".inputs.pt"), ""});
}

Case bug_case(const std::string& name) {
  const std::string dir = source_path("examples/bugs/" + name + "/");
  return tsrepro::import_case({dir + "model.pt", "forward", dir + "inputs.pt", ""});
}

tsrepro::ReproSettings settings_for(const std::string& backend, const std::string& kind,
                                    const std::string& signature) {
  tsrepro::ReproSettings s;
  s.failure.run.backend = backend;
  if (!kind.empty()) s.failure.status = tsrepro::status_from_name(kind);
  s.failure.signature = signature;
  s.command_line = "tsrepro run case --backend " + backend;
  return s;
}

Case case_from_ir(const std::string& ir, std::vector<c10::IValue> values) {
  Case c;
  c.graph = tsrepro::graph_from_ir(ir, "test");
  for (size_t i = 0; i < values.size(); ++i)
    c.inputs.push_back(tsrepro::spec_from_value(c.graph->inputs()[i]->debugName(), values[i]));
  c.values = std::move(values);
  return c;
}

const char* const kChain = R"IR(graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::relu(%a)
  %c : Tensor = aten::tanh(%b)
  %d : Tensor = aten::add(%c, %x, %one)
  %e : Tensor = aten::sigmoid(%d)
  return (%e)
)IR";

std::string chain_ir(size_t n, const std::map<size_t, std::string>& ops_at) {
  std::string ir = "graph(%v0 : Tensor):\n";
  for (size_t i = 0; i < n; ++i) {
    const auto op = ops_at.find(i);
    ir += "  %v" + std::to_string(i + 1) + " : Tensor = aten::" + (op == ops_at.end() ? "tanh" : op->second) + "(%v" +
          std::to_string(i) + ")\n";
  }
  return ir + "  return (%v" + std::to_string(n) + ")\n";
}

std::vector<std::string> node_kinds(const Case& c) {
  std::vector<std::string> kinds;
  for (torch::jit::Node* n : tsrepro::cuttable_nodes(*c.graph)) kinds.push_back(n->kind().toQualString());
  return kinds;
}

namespace {

bool block_has(const torch::jit::Block* block, c10::Symbol kind) {
  for (const torch::jit::Node* node : block->nodes()) {
    if (node->kind() == kind) return true;
    for (const torch::jit::Block* inner : node->blocks())
      if (block_has(inner, kind)) return true;
  }
  return false;
}

}  // namespace

std::function<bool(const Case&)> has_op(const std::string& kind) {
  const c10::Symbol symbol = c10::Symbol::fromQualString(kind);
  return [symbol](const Case& c) { return block_has(c.graph->block(), symbol); };
}

}  // namespace tsrepro_test
