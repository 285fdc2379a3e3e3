#include "repro/issue_report.h"

#include <iomanip>
#include <sstream>

#include "repro/describe.h"
#include "repro/markdown.h"
#include "repro/template_fill.h"
#include "repro/templates_report.h"  // generated from repro/templates/report/
#include "tsrepro/backend.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

// Lines of repro.py's output shown in the report: the end, where the verdict is.
constexpr size_t kShownOutputLines = 60;

std::string described_backend(const std::string& spec) {
  const BackendInfo* info = find_backend(spec);
  if (!info) return markdown_code_span(spec);
  std::string description = info->description;
  const std::string role = " (the reference)";  // eager's description says so; the sentence does too
  if (description.size() > role.size() && description.compare(description.size() - role.size(), role.size(), role) == 0)
    description.resize(description.size() - role.size());
  return markdown_code_span(spec) + " (" + markdown_text(description) + ")";
}

// A value placed on its own in the template: no trailing newlines (the template has its own).
std::string block(std::string text) {
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

std::string joined_spans(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + markdown_code_span(item);
  return text;
}

std::string number(double value) {
  std::ostringstream out;
  out << std::setprecision(4) << value;
  return out.str();
}

std::string what_fails(const ReproSettings& s) {
  switch (s.failure.status.value_or(Status::Pass)) {
    case Status::Accuracy:
      return "returns values that differ from the reference's";
    case Status::Exception:
      return "raises an exception where the reference does not";
    case Status::Crash:
      return "kills the process (" + markdown_code_span(s.failure.signature) + ")";
    case Status::Timeout:
      return "does not finish";
    default:
      return "fails";
  }
}

std::string summary(const IssueReport& r) {
  const Case& c = *r.c;
  const ReproSettings& s = r.settings;
  std::ostringstream out;
  out << "Under " << described_backend(s.failure.run.backend) << ", this TorchScript graph of "
      << count_compute_nodes(*c.graph) << " compute nodes (" << joined_spans(interesting_ops(*c.graph)) << ") "
      << what_fails(s) << ". The reference is " << described_backend(s.failure.run.ref) << ".";
  if (s.failure.flaky())
    out << " The failure is flaky: tsrepro saw it in " << s.failure.failed_runs << " of " << s.failure.runs
        << " runs. repro.py runs the case " << s.failure.run.repeat
        << " times, each in a fresh process, and exits 1 if any run fails.";
  const nlohmann::json& minify = c.provenance.value("minify", nlohmann::json::object());
  if (minify.contains("original_nodes")) {
    out << " tsrepro minified it from " << minify.value("original_nodes", 0) << " to " << count_compute_nodes(*c.graph)
        << " compute nodes in " << minify.value("queries", 0) << " runs.";
  }
  const nlohmann::json passes = c.provenance.value("passes", nlohmann::json::object());
  if (passes.contains("finding"))
    out << "\n\nBisected to: " << markdown_text(passes["finding"].get<std::string>())
        << " (`tsrepro explain --passes`, " << passes.value("runs", 0) << " runs).";
  if (passes.contains("runs_right_with") && passes["runs_right_with"].is_object() &&
      !passes["runs_right_with"].empty()) {
    std::string settings;
    for (const auto& [name, value] : passes["runs_right_with"].items())
      settings += name + "=" + value.get<std::string>() + " ";
    out << " With PyTorch's CompilerBisector stopped just before it, the case runs right: "
        << markdown_code_span(settings + "python3 repro.py") << ".";
  }
  return out.str();
}

std::string observed_text(const Verdict& v) {
  std::ostringstream out;
  switch (v.status) {
    case Status::Pass:
      out << "no failure: the recorded one does not reproduce on this machine now.\n";
      break;
    case Status::Accuracy:
      out << "the outputs differ (" << markdown_code_span(v.signature) << "):\n\n"
          << "| output | dtype | max_abs | max_rel | |\n|---|---|---|---|---|\n";
      for (const OutputDiff& d : v.outputs)
        out << "| " << markdown_text(d.path) << " | " << markdown_text(d.dtype) << " | " << number(d.max_abs) << " | "
            << number(d.max_rel) << " | " << (d.ok ? "ok" : markdown_text(d.reason)) << " |\n";
      break;
    case Status::Exception:
      out << "an exception "
          << (v.phase == Phase::Compile ? "while compiling" : std::string("in the ") + phase_name(v.phase) + " phase")
          << ":\n\n"
          << markdown_code_block(v.message);
      break;
    case Status::Crash:
    case Status::Timeout:
      out << markdown_text(v.message) << " (" << markdown_code_span(v.signature) << ").\n";
      break;
    default:
      out << "tsrepro cannot run the case here:\n\n" << markdown_code_block(v.message);
  }
  return out.str();
}

std::string expected_vs_observed(const IssueReport& r) {
  const ReproSettings& s = r.settings;
  std::ostringstream out;
  out << "**Expected:** ";
  if (s.failure.status == Status::Accuracy)
    out << "the outputs of " << markdown_code_span(s.failure.run.ref)
        << ", within tol=" << number(s.failure.run.compare.tol) << " by the rules of `torch._dynamo.utils.same()`.\n\n";
  else
    out << "the graph runs to the end under " << markdown_code_span(s.failure.run.backend) << ", as it does under "
        << markdown_code_span(s.failure.run.ref) << ".\n\n";
  out << "**Observed** (`tsrepro run`, " << number(r.observed.seconds) << " s): " << observed_text(r.observed);
  return out.str();
}

std::string last_lines(const std::string& text, size_t count) {
  size_t start = text.size();
  for (size_t lines = 0; start > 0 && lines <= count; --start)
    if (text[start - 1] == '\n' && start != text.size()) ++lines;
  return start == 0 ? text : "...\n" + text.substr(start + 1);
}

std::string repro_output(const IssueReport& r) {
  if (!r.repro_run) return "";
  return "Its output on this machine (" + markdown_text(r.repro_run->status) + "):\n\n" +
         markdown_code_block(last_lines(r.repro_run->output, kShownOutputLines));
}

// A minified case has a handful of nodes; an unminified one may have hundreds.
constexpr size_t kListedReportOrigins = 20;

std::string provenance(const Case& c) {
  std::ostringstream out;
  const nlohmann::json& p = c.provenance;
  if (p.contains("source") && p["source"].is_string()) {
    out << "- Model: " << markdown_code_span(p["source"].get<std::string>());
    if (p.contains("method") && p["method"].is_string())
      out << ", method " << markdown_code_span(p["method"].get<std::string>());
    out << ".\n";
  }
  if (p.contains("imported_compute_nodes"))
    out << "- Imported with " << p.value("imported_compute_nodes", 0) << " compute nodes; "
        << count_compute_nodes(*c.graph) << " remain.\n";
  std::vector<std::string> parameters;
  for (const InputSpec& spec : c.inputs)
    if (spec.lifted && !spec.lifted_from.empty() && spec.lifted_from != "constant")
      parameters.push_back(spec.lifted_from);
  if (!parameters.empty())
    out << "- Parameters, buffers and attributes the nodes read: " << joined_spans(parameters) << ".\n";
  out << "- Ops: " << joined_spans(interesting_ops(*c.graph)) << ".\n";
  const std::vector<NodeOrigin> origins =
      c.node_origins ? origins_in_graph(*c.graph, *c.node_origins) : std::vector<NodeOrigin>{};
  if (origins.empty()) {
    out << "- The case records no node origins (imported before tsrepro kept them, or from IR text without "
           "them), so the lines of the model's code behind each node are not listed here.\n";
    return out.str();
  }
  out << "- Each node, where the model's code makes it (node numbers of the imported graph):\n";
  for (size_t i = 0; i < origins.size() && i < kListedReportOrigins; ++i) {
    const NodeOrigin& o = origins[i];
    out << "  - " << markdown_code_span(o.kind);
    if (!o.file.empty()) out << " at " << markdown_code_span(o.file + ":" + std::to_string(o.line));
    if (!o.module_path.empty()) out << " in " << markdown_code_span(o.module_path);
    out << " (node " << o.index << ")\n";
  }
  if (origins.size() > kListedReportOrigins)
    out << "  - and " << origins.size() - kListedReportOrigins << " more (the case's graph.ir comments)\n";
  return out.str();
}

std::string environment_block(const std::vector<EnvironmentFact>& facts) {
  std::string text;
  for (const EnvironmentFact& fact : facts) text += fact.name + ": " + fact.value + "\n";
  return markdown_code_block(text);
}

}  // namespace

std::string issue_markdown(const IssueReport& r) {
  return fill_template(templates::report_issue,
                       {{"TITLE", markdown_text(issue_title(*r.c, r.settings))},
                        {"SUMMARY", block(summary(r))},
                        {"EXPECTED_VS_OBSERVED", block(expected_vs_observed(r))},
                        {"REPRO_PY_BLOCK", block(markdown_code_block(r.repro_py, "python"))},
                        {"REPRO_OUTPUT", block(repro_output(r))},
                        {"PROVENANCE", block(provenance(*r.c))},
                        {"GRAPH_PICTURE", r.graph_svg.empty() ? std::string()
                                                              : "![The graph: each op and the model's line it "
                                                                "came from](" +
                                                                    r.graph_svg + ")\n"},
                        {"ENVIRONMENT", block(environment_block(r.environment))},
                        {"TSREPRO_VERSION", markdown_text(TSREPRO_VERSION)},
                        {"BACKEND", markdown_code_span(r.settings.failure.run.backend)}});
}

ReproSettings settings_from_case(const Case& c, const std::string& case_json) {
  if (!c.expected || !c.expected->is_failure())
    throw UserError(
        case_json +
        ": no recorded failure (`tsrepro run CASE --backend B --save-repro` or `tsrepro minify` records one)");
  ReproSettings s{*c.expected, ""};
  // A case without values can only be run on fake ones, whatever the run that saw it used.
  s.failure.run.fake_inputs = s.failure.run.fake_inputs || !c.values || c.provenance.value("fake_inputs", false);
  return s;
}

}  // namespace tsrepro
