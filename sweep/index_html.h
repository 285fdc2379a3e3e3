#pragma once
// OUT/index.html: the sweep as one self-contained page (no network, no script): a table of the
// distinct bugs (backend, ops, models, rate, nodes before and after, links to repro.py, repro.cpp
// and ISSUE.md), each bug's minified graph drawn (repro/graph_drawing.h) and its minify plotted
// (nodes against candidates run), and every model's result under every backend. Made from
// sweep.json and the files it names, from templates in sweep/templates/.

#include <string>

#include <nlohmann/json.hpp>

namespace tsrepro {

void write_index_html(const std::string& out_dir, const nlohmann::json& sweep);

}  // namespace tsrepro
