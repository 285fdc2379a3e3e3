#include "runner/formats/ir_limits.h"

#include <utility>
#include <vector>

#include <torch/csrc/jit/ir/ir.h>

#include "tsrepro/error.h"
#include "tsrepro/limits.h"

namespace tsrepro {
namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

std::string line_label(size_t line) { return "line " + std::to_string(line); }

}  // namespace

void check_ir_text_limits(const std::string& text, const std::string& origin) {
  // Indentation as libtorch's lexer reads it: a line indented deeper than the one before opens
  // a level, a shallower one closes levels down to its own. A block nests two levels deep (its
  // "blockN():" header, then its body).
  std::vector<size_t> indents{0};
  // Brackets nested in a line's types and lists ("(((((int)))))": libtorch's type parser recurses
  // once per level and overflowed the stack at a few thousand: found by fuzz/ir_text_fuzzer),
  // counted outside string literals (which end with their line).
  size_t brackets = 0;
  char quote = 0;
  size_t line = 1;
  for (size_t start = 0; start < text.size(); ++line) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const size_t first = text.find_first_not_of(" \t\r", start);
    if (first < end && text[first] != '#') {
      const size_t indent = first - start;
      while (indents.size() > 1 && indent < indents.back()) indents.pop_back();
      if (indent > indents.back()) indents.push_back(indent);
      if (indents.size() - 1 > 2 * limits::kMaxNestingDepth)
        throw UserError(origin + ": " + line_label(line) + ": blocks nested deeper than tsrepro's limit of " +
                        std::to_string(limits::kMaxNestingDepth));
    }
    quote = 0;  // a string literal ends with its line
    for (size_t at = start; at < end; ++at) {
      const char c = text[at];
      if (quote) {
        if (c == '\\')
          ++at;
        else if (c == quote)
          quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '(' || c == '[' || c == '{') {
        if (++brackets > limits::kMaxNestingDepth)
          throw UserError(origin + ": " + line_label(line) + ": brackets nested deeper than tsrepro's limit of " +
                          std::to_string(limits::kMaxNestingDepth));
      } else if ((c == ')' || c == ']' || c == '}') && brackets > 0) {
        --brackets;
      }
    }
    for (size_t at = text.find('%', start); at < end; at = text.find('%', at + 1)) {
      size_t name_end = at + 1;
      while (name_end < end && is_name_char(text[name_end])) ++name_end;
      if (name_end - at - 1 > limits::kMaxIdentifierBytes)
        throw UserError(origin + ": " + line_label(line) + ": a value name of " + std::to_string(name_end - at - 1) +
                        " bytes, over tsrepro's limit of " + std::to_string(limits::kMaxIdentifierBytes));
      at = name_end - 1;
    }
    start = end + 1;
  }
}

void check_graph_limits(const torch::jit::Graph& graph, const std::string& origin) {
  size_t nodes = 0, constants = 0;
  std::vector<std::pair<const torch::jit::Block*, size_t>> pending{{graph.block(), 0}};
  while (!pending.empty()) {
    const auto [block, depth] = pending.back();
    pending.pop_back();
    if (depth > limits::kMaxNestingDepth)
      throw UserError(origin + ": blocks nested deeper than tsrepro's limit of " +
                      std::to_string(limits::kMaxNestingDepth));
    for (const torch::jit::Node* node : block->nodes()) {
      ++nodes;
      constants += node->kind() == c10::prim::Constant;
      for (const torch::jit::Block* inner : node->blocks()) pending.emplace_back(inner, depth + 1);
    }
  }
  if (nodes > limits::kMaxGraphNodes)
    throw UserError(origin + ": " + std::to_string(nodes) + " nodes, over tsrepro's limit of " +
                    std::to_string(limits::kMaxGraphNodes) + " per graph");
  if (constants > limits::kMaxGraphConstants)
    throw UserError(origin + ": " + std::to_string(constants) + " prim::Constant nodes, over tsrepro's limit of " +
                    std::to_string(limits::kMaxGraphConstants) + " per graph");
}

}  // namespace tsrepro
