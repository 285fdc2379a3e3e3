// write_index_html: sweep.json as a page people look at.

#include "sweep/index_html.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "repro/describe.h"
#include "repro/graph_drawing.h"
#include "repro/html_text.h"
#include "repro/template_fill.h"
#include "repro/reproducer_case.h"
#include "repro/templates_sweep.h"  // generated from sweep/templates/
#include "runner/file_util.h"
#include "sweep/sweep.h"
#include "tsrepro/case.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace tsrepro {
namespace {

std::string link(const json& bug, const char* key, const char* text) {
  if (!bug.contains(key) || !bug[key].is_string()) return "";
  return "<a href=\"" + html_text(bug[key].get<std::string>()) + "\">" + text + "</a>";
}

// Nodes against queries: the minify's start, then each accepted step (summary.json's trace).
std::string minify_plot(const json& bug, const json& summary) {
  std::vector<std::pair<double, double>> points = {{0.0, bug.value("original_nodes", 0.0)}};
  for (const json& step : summary.value("trace", json::array()))
    points.emplace_back(step.value("queries", 0.0), step.value("nodes", 0.0));
  double max_q = 1, min_n = points.front().second, max_n = points.front().second;
  for (const auto& [q, n] : points) {
    max_q = std::max(max_q, q);
    min_n = std::min(min_n, n);
    max_n = std::max(max_n, n);
  }
  std::ostringstream line, dots;
  for (const auto& [q, n] : points) {
    const double x = 40 + 290 * q / max_q;
    const double y = max_n > min_n ? 170 - 160 * (n - min_n) / (max_n - min_n) : 90;
    line << x << "," << y << " ";
    dots << "<circle cx=\"" << x << "\" cy=\"" << y << "\" r=\"3\" fill=\"#2f5f9e\"/>\n";
  }
  return fill_template(templates::sweep_plot, {{"POINTS", line.str()},
                                               {"DOTS", dots.str()},
                                               {"MAX_QUERIES", std::to_string(static_cast<int64_t>(max_q))},
                                               {"MIN_NODES", std::to_string(static_cast<int64_t>(min_n))},
                                               {"MAX_NODES", std::to_string(static_cast<int64_t>(max_n))}});
}

json summary_of(const fs::path& bug_dir) {
  std::ifstream in(bug_dir / "summary.json");
  const json summary = json::parse(in, nullptr, false);
  return summary.is_discarded() ? json::object() : summary;
}

struct BugHtml {
  std::string row, section;
};

BugHtml bug_html(const std::string& out_dir, const json& bug) {
  const fs::path bug_dir = fs::path(out_dir) / "bugs" / bug.value("id", "");
  std::vector<std::string> ops, models;
  std::string graph = "<p>(no minified graph: " + html_text(bug.value("error", "minify failed")) + ")</p>";
  std::string bisected;  // where in the compiler, as minify's `tsrepro explain --passes` found it (issue 54)
  if (bug["repro"].is_string()) {
    try {
      const Case minified = load_case((bug_dir / "minified").string());
      const json passes = minified.provenance.value("passes", json::object());
      if (passes.contains("finding") && passes["finding"].is_string())
        bisected = "<p class=\"bisected\">Bisected to: " + html_text(passes["finding"].get<std::string>()) + "</p>";
      ops = interesting_ops(*minified.graph);  // the ops ISSUE.md's title and summary name
      graph = svg_of_dot(graph_dot(minified)).value_or("<p>(Graphviz's dot is not installed: no drawing)</p>");
    } catch (const std::exception& e) {
      graph = "<p>(" + html_text(e.what()) + ")</p>";
    }
  }
  for (const json& model : bug["models"]) models.push_back(html_text(model.get<std::string>()));
  std::vector<std::string> escaped_ops;
  for (const std::string& op : ops) escaped_ops.push_back("<code>" + html_text(op) + "</code>");
  const int runs = bug.value("runs", 0), failed = bug.value("failed_runs", 0);
  const std::string rate = std::to_string(failed) + " of " + std::to_string(runs);
  const TemplateValues values = {
      {"ID", html_text(bug.value("id", ""))},
      {"BACKEND", html_text(joined(bug.value("backends", std::vector<std::string>{bug.value("backend", "")}), ", "))},
      {"OPS", joined(escaped_ops, ", ")},
      {"SIGNATURE", html_text(bug.value("signature", ""))},
      {"MODELS", joined(models, ", ")},
      {"RATE", bug.value("flaky", false) ? "<span class=\"flaky\">flaky: " + rate + "</span>" : rate},
      {"NODES", bug.contains("final_nodes") ? std::to_string(bug.value("original_nodes", 0)) + " &rarr; " +
                                                  std::to_string(bug.value("final_nodes", 0))
                                            : ""},
      {"LINKS",
       joined({link(bug, "repro", "repro.py"), link(bug, "repro_cpp", "repro.cpp"), link(bug, "issue", "ISSUE.md")},
              " ")},
      {"HEADLINE", html_text(bug.value("status", "")) + (ops.empty() ? "" : " in " + joined(escaped_ops, " + "))},
      {"REPRESENTATIVE", html_text(bug.value("representative", ""))},
      {"GRAPH", graph},
      {"BISECTED", bisected},
      {"PLOT", minify_plot(bug, summary_of(bug_dir))}};
  return {fill_template(templates::sweep_bug_row, values), fill_template(templates::sweep_bug_section, values)};
}

std::string model_rows(const json& sweep, std::string& header) {
  header = "<tr><th>model</th><th>nodes</th>";
  for (const json& backend : sweep["backends"]) header += "<th>" + html_text(backend.get<std::string>()) + "</th>";
  header += "</tr>";
  std::string rows;
  for (const json& model : sweep["models"]) {
    rows += "<tr><td>" + html_text(model.value("name", "")) + "</td><td>" + std::to_string(model.value("nodes", 0)) +
            "</td>";
    for (const json& backend : sweep["backends"]) {
      const json result = model.value("results", json::object()).value(backend.get<std::string>(), json::object());
      const std::string status =
          model.contains("import_error") ? "import failed" : result.value("status", std::string("not run"));
      const bool failed = !model.contains("import_error") && is_failure_status(status);
      const std::string why = model.contains("import_error") ? model.value("import_error", "")
                                                             : result.value("signature", result.value("message", ""));
      rows += "<td class=\"" +
              std::string(failed             ? "fail"
                          : status == "pass" ? "pass"
                                             : "other") +
              "\" title=\"" + html_text(why) + "\">" + html_text(status) + "</td>";
    }
    rows += "</tr>\n";
  }
  return rows;
}

}  // namespace

void write_index_html(const std::string& out_dir, const json& sweep) {
  std::string rows, sections, header;
  for (const json& bug : sweep["bugs"]) {
    const BugHtml html = bug_html(out_dir, bug);
    rows += html.row;
    sections += html.section;
  }
  const size_t bugs = sweep["bugs"].size(), models = sweep["models"].size(), backends = sweep["backends"].size();
  const std::string title = "tsrepro sweep: " + std::to_string(bugs) + " distinct bug" + (bugs == 1 ? "" : "s") +
                            " in " + std::to_string(models) + " models under " + std::to_string(backends) + " backends";
  std::vector<std::string> backend_names;
  for (const json& backend : sweep["backends"]) backend_names.push_back(backend.get<std::string>());
  const std::string summary = "Zoo <code>" + html_text(sweep.value("zoo", "")) + "</code>, backends " +
                              html_text(joined(backend_names, ", ")) + "; every failure run " +
                              std::to_string(1 + sweep.value("repeat", 0)) + " times; " +
                              std::to_string(sweep.value("jobs", 0)) + " jobs.";
  const std::string model_table = model_rows(sweep, header);
  write_file_atomically((fs::path(out_dir) / "index.html").string(),
                        fill_template(templates::sweep_index, {{"TITLE", html_text(title)},
                                                               {"SUMMARY", summary},
                                                               {"BUG_ROWS", rows},
                                                               {"BUG_SECTIONS", sections},
                                                               {"MODEL_HEADER", header},
                                                               {"MODEL_ROWS", model_table}}));
}

}  // namespace tsrepro
