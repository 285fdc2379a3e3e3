#pragma once
// tsrepro's limits (tsrepro/limits.h) applied to a graph: to its IR text before libtorch's
// parser sees it (whose recursion and whose regexes a hostile name or nesting would overflow),
// and to the parsed or imported graph. Each throws UserError("ORIGIN: ... limit of N ...").

#include <string>

namespace torch::jit {
struct Graph;
}

namespace tsrepro {

// Value names longer than limits::kMaxIdentifierBytes, indentation nested past
// limits::kMaxNestingDepth blocks. One linear scan of the text.
void check_ir_text_limits(const std::string& text, const std::string& origin);

// Nodes, constants and block nesting of a graph, counted without recursion.
void check_graph_limits(const torch::jit::Graph& graph, const std::string& origin);

}  // namespace tsrepro
