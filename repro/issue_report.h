#pragma once
// ISSUE.md: a failure written up for a PyTorch bug report. The text is
// repro/templates/report/issue.md with its placeholders filled; everything taken from the case
// goes through repro/markdown.h.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "repro/environment.h"
#include "tsrepro/case.h"
#include "tsrepro/verdict.h"
#include "tsrepro/writer.h"

namespace tsrepro {

// What running repro.py printed on this machine.
struct ReproRun {
  std::string output;  // stdout and stderr, as they came
  std::string status;  // "exit status 1", "killed by SIGSEGV", "no answer within 120 s"
};

struct IssueReport {
  const Case* c = nullptr;
  ReproSettings settings;
  std::string repro_py;
  Verdict observed;                   // tsrepro run's verdict, now
  std::optional<ReproRun> repro_run;  // none when no Python with torch was found, or it would hang
  std::vector<EnvironmentFact> environment;
  std::string graph_svg;  // the graph drawn (repro/graph_drawing.h), a file beside ISSUE.md; empty: none
};

std::string issue_markdown(const IssueReport& report);

// The settings a case's recorded failure was seen with (case.json's expected_failure).
// Throws UserError naming `case_json` when the case records none.
ReproSettings settings_from_case(const Case& c, const std::string& case_json);

}  // namespace tsrepro
