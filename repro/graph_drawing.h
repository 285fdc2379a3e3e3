#pragma once
// A case's graph drawn for people: Graphviz DOT text (one box per compute node, labelled with its
// op and the model's source line it came from; the graph's inputs and outputs as ellipses; an
// arrow per value), and the SVG Graphviz's `dot` makes of it. The sweep's index.html and
// `tsrepro report` (graph.svg beside ISSUE.md) show it.

#include <optional>
#include <string>

#include "tsrepro/case.h"

namespace tsrepro {

std::string graph_dot(const Case& c);

// `dot -Tsvg` of `dot_text`, without the XML prologue (it is inlined into pages); nullopt where
// Graphviz is not installed or fails.
std::optional<std::string> svg_of_dot(const std::string& dot_text);

}  // namespace tsrepro
