// graph_dot and svg_of_dot.

#include "repro/graph_drawing.h"

#include <chrono>
#include <filesystem>
#include <sstream>
#include <unordered_map>

#include "process/child_process.h"
#include "runner/graph/nested_nodes.h"

namespace tsrepro {
namespace {

// How long dot may take to draw a graph before the report goes without the drawing.
constexpr int kDotSeconds = 60;

// A DOT string literal: quotes and backslashes escaped, newlines as DOT's centred line break.
std::string dot_string(const std::string& text) {
  std::string out = "\"";
  for (char ch : text) {
    if (ch == '"' || ch == '\\')
      out += std::string("\\") + ch;
    else if (ch == '\n')
      out += "\\n";
    else if (static_cast<unsigned char>(ch) >= 0x20)
      out += ch;
  }
  return out + "\"";
}

// "aten::cos\nmake_zoo.py:43": the op, and the model's line where the case knows it.
std::string node_label(const torch::jit::Node& node, const NodeOrigins* origins) {
  std::string label = node.kind().toQualString();
  if (const NodeOrigin* o = origin_numbered(origins, origin_index(node)); o && !o->file.empty())
    label += "\n" + std::filesystem::path(o->file).filename().string() + ":" + std::to_string(o->line);
  return label;
}

}  // namespace

std::string graph_dot(const Case& c) {
  const torch::jit::Graph& graph = *c.graph;
  std::ostringstream dot;
  dot << "digraph repro {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=11];\n";
  std::unordered_map<const torch::jit::Value*, std::string> source;  // value -> the DOT node that makes it
  for (size_t i = 0; i < graph.inputs().size(); ++i) {
    const torch::jit::Value* input = graph.inputs()[i];
    source[input] = "in" + std::to_string(i);
    dot << "  in" << i << " [shape=ellipse, label="
        << dot_string("input " + std::to_string(i) + "\n" + input->type()->annotation_str()) << "];\n";
  }
  size_t k = 0;
  for (torch::jit::Node* node : nested_nodes(const_cast<torch::jit::Graph&>(graph).block())) {
    if (!is_compute_node(*node)) continue;
    const std::string id = "n" + std::to_string(k++);
    dot << "  " << id << " [shape=box, style=\"rounded,filled\", fillcolor=\"#e8eef8\", label="
        << dot_string(node_label(*node, c.node_origins.get())) << "];\n";
    for (const torch::jit::Value* input : node->inputs())
      if (auto from = source.find(input); from != source.end()) dot << "  " << from->second << " -> " << id << ";\n";
    for (const torch::jit::Value* output : node->outputs()) source[output] = id;
    for (const torch::jit::Block* block : node->blocks())
      for (const torch::jit::Value* param : block->inputs()) source[param] = id;
  }
  for (size_t i = 0; i < graph.outputs().size(); ++i) {
    dot << "  out" << i << " [shape=ellipse, label=" << dot_string("output " + std::to_string(i)) << "];\n";
    if (auto from = source.find(graph.outputs()[i]); from != source.end())
      dot << "  " << from->second << " -> out" << i << ";\n";
  }
  dot << "}\n";
  return dot.str();
}

std::optional<std::string> svg_of_dot(const std::string& dot_text) {
  const std::string dot = find_program("dot");
  if (dot.empty()) return std::nullopt;
  ChildSpec spec;
  spec.argv = {dot, "-Tsvg"};
  spec.in = spec.out = Stream::pipe();
  spec.err = Stream::null();
  // Fed and read at once: a large graph's SVG fills the pipe before dot has read all of its input.
  const ChildRun run = run_child(spec, std::chrono::seconds(kDotSeconds), dot_text);
  if (!run.exited_with(0)) return std::nullopt;
  const size_t start = run.out.find("<svg");
  return start == std::string::npos ? std::nullopt : std::optional<std::string>(run.out.substr(start));
}

}  // namespace tsrepro
