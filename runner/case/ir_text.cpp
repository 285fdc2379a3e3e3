// case.h's graph_to_ir and graph_to_ir_with_origins: a graph's IR text as parseIR reads it back,
// with tsrepro's own node attributes left out. Torch and node_origin.cpp alone: the capture
// library compiles it too, for the IR of what it captures.

#include <cctype>
#include <optional>
#include <string>

#include <torch/script.h>

#include "runner/formats/printable_constants.h"
#include "tsrepro/case.h"
#include "tsrepro/node_origin.h"

namespace tsrepro {
namespace {

const std::string kOwnAttributePrefix = "tsrepro_";
const std::string kOriginAttributeText = "tsrepro_origin=";

// Takes tsrepro's own attributes out of one printed node line ("aten::relu[tsrepro_origin=17]
// (%x)" -> "aten::relu(%x)"); returns the origin number it held, if any.
std::optional<int64_t> strip_own_attributes(std::string& line) {
  std::optional<int64_t> origin;
  if (line.find("prim::Constant[") != std::string::npos) return origin;  // never numbered
  for (size_t at = line.find(kOwnAttributePrefix); at != std::string::npos; at = line.find(kOwnAttributePrefix, at)) {
    const bool first = at > 0 && line[at - 1] == '[';
    const bool later = at > 1 && line.compare(at - 2, 2, ", ") == 0;
    if (!first && !later) {
      at += kOwnAttributePrefix.size();
      continue;
    }
    const size_t equals = line.find('=', at);
    size_t end = equals == std::string::npos ? line.size() : equals + 1;
    while (end < line.size() && (std::isdigit(static_cast<unsigned char>(line[end])) || line[end] == '-')) ++end;
    if (line.compare(at, kOriginAttributeText.size(), kOriginAttributeText) == 0 && end > equals + 1)
      origin = std::stoll(line.substr(equals + 1, end - equals - 1));
    if (later) {
      line.erase(at - 2, end - at + 2);
      at -= 2;
    } else if (line.compare(end, 2, ", ") == 0) {
      line.erase(at, end + 2 - at);
    } else {
      line.erase(at, end - at);
      if (line.compare(at - 1, 2, "[]") == 0) {
        line.erase(at - 1, 2);
        --at;
      }
    }
  }
  return origin;
}

// The printer writes a node without outputs as " = prim::If(...)"; parseIR wants no "=" there.
// A plain scan, not std::regex: this runs twice per query on graphs of 100 KB of text, where
// libstdc++'s regex took milliseconds.
std::string print_ir(const torch::jit::Graph& graph, const NodeOrigins* origins);

// Torch prints a nested node's source location as a comment even when asked for none
// (Graph::toString(false) passes the flag to the top-level nodes only). A file name that holds
// a line break (a model saved from "a\nb.py") would break the text there: such a node's
// location is dropped, on a copy. (Ours, origin_comment, is escaped: ir_comment_text.h.)
bool location_breaks_lines(const torch::jit::Node& node) {
  const torch::jit::SourceRange& range = node.sourceRange();
  if (!range.source()) return false;
  const auto generated_from = range.findSourceRangeThatGenerated();
  const auto location = (generated_from ? *generated_from : range).file_line_col();
  return location && std::get<0>(*location).find_first_of("\n\r") != std::string::npos;
}

bool nested_locations_break_lines(const torch::jit::Block* block, bool nested) {
  for (const torch::jit::Node* node : block->nodes()) {
    if (nested && location_breaks_lines(*node)) return true;
    for (const torch::jit::Block* inner : node->blocks())
      if (nested_locations_break_lines(inner, true)) return true;
  }
  return false;
}

void drop_line_breaking_locations(torch::jit::Block* block) {
  for (torch::jit::Node* node : block->nodes()) {
    if (location_breaks_lines(*node)) node->setSourceRange(torch::jit::SourceRange());
    for (torch::jit::Block* inner : node->blocks()) drop_line_breaking_locations(inner);
  }
}

// Constants the parser cannot read back are rebuilt, on a copy, from ones it can; locations that
// would break lines are dropped.
std::string print_printable_ir(const torch::jit::Graph& graph, const NodeOrigins* origins) {
  const bool unprintable = has_unprintable_constants(graph);
  const bool breaking = nested_locations_break_lines(graph.block(), false);
  if (!unprintable && !breaking) return print_ir(graph, origins);
  // Graph::copy leaves its graph as it was, but 1.13 does not declare it const.
  const std::shared_ptr<torch::jit::Graph> copy = const_cast<torch::jit::Graph&>(graph).copy();
  if (breaking) drop_line_breaking_locations(copy->block());
  const StringLiteralFixes fixes = make_constants_printable(*copy);
  std::string text = print_ir(*copy, origins);
  for (const auto& [placeholder, literal] : fixes)
    for (size_t at = text.find(placeholder); at != std::string::npos; at = text.find(placeholder, at + literal.size()))
      text.replace(at, placeholder.size(), literal);
  return text;
}

std::string print_ir(const torch::jit::Graph& graph, const NodeOrigins* origins) {
  const std::string printed = graph.toString(false);
  std::string text;
  text.reserve(printed.size());
  std::string line;
  for (size_t start = 0; start < printed.size();) {
    const size_t end = std::min(printed.find('\n', start), printed.size());
    line.assign(printed, start, end - start);
    const size_t indent = line.find_first_not_of(' ');
    if (indent != std::string::npos && indent > 0 && line.compare(indent, 2, "= ") == 0)
      line.erase(indent - 1, 3);  // "<spaces> = rest" becomes "<spaces less one>rest"
    std::optional<int64_t> number;
    if (line.find(kOwnAttributePrefix) != std::string::npos) number = strip_own_attributes(line);
    if (const NodeOrigin* origin = origin_numbered(origins, number)) {
      // Ours replaces the source-range comment torch prints for nodes inside blocks.
      const size_t torch_comment = line.find(" # ");
      if (torch_comment != std::string::npos) line.erase(torch_comment);
      line += " # " + origin_comment(*origin);
    }
    text += line;
    if (end < printed.size()) text.push_back('\n');
    start = end + 1;
  }
  return text;
}

}  // namespace

std::string graph_to_ir(const torch::jit::Graph& graph) { return print_printable_ir(graph, nullptr); }

std::string graph_to_ir_with_origins(const torch::jit::Graph& graph, const NodeOrigins* origins) {
  return print_printable_ir(graph, origins);
}

}  // namespace tsrepro
