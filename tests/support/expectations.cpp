// Expectations several command-line test files share.

#include "tests/support/expectations.h"

#include <regex>
#include <set>
#include <sstream>

#include <algorithm>
#include <csignal>
#include <iostream>
#include <map>
#include <vector>

#include "tests/support/paths.h"

namespace tsrepro_test {

// The verdict JSON of `run --json`, after checking the process ended with `exit_code`.
json expect_verdict(const Result& r, int exit_code, const std::string& status) {
  SCOPED_TRACE(r.describe());
  EXPECT_TRUE(r.exited);
  EXPECT_EQ(r.exit_code, exit_code);
  EXPECT_EQ(r.stray_processes, 0u) << "a worker outlived tsrepro\n";
  json j;
  try {
    j = r.stdout_json();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "stdout is not exactly one JSON object: " << e.what() << "\n";
    return json::object();
  }
  EXPECT_TRUE(j.is_object());
  if (!j.is_object()) return json::object();
  for (const char* key : {"status", "phase", "signature", "message", "outputs", "seconds"})
    EXPECT_TRUE(j.contains(key)) << "verdict lacks \"" << key << "\"\n";
  EXPECT_EQ(j.value("status", ""), status);
  if (j.contains("outputs")) {
    EXPECT_TRUE(j["outputs"].is_array());
  }
  return j;
}

void expect_pass(const Result& r) {
  const json j = expect_verdict(r, 0, "pass");
  if (!j.contains("outputs") || !j["outputs"].is_array()) return;
  EXPECT_FALSE(j["outputs"].empty()) << "a passing verdict compares at least one output\n" << r.describe();
  for (const json& o : j["outputs"]) EXPECT_TRUE(o.value("ok", false)) << o.dump() << "\n" << r.describe();
  EXPECT_EQ(j.value("signature", "?"), "") << r.describe();
}

// Bad input: exit 2, nothing on stdout, exactly one stderr line "tsrepro: error: ..." that names
// what is at fault.
void expect_bad_input(const Result& r, const std::string& must_mention) {
  SCOPED_TRACE(r.describe());
  EXPECT_TRUE(r.exited) << "tsrepro did not exit normally\n";
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("tsrepro: error: ", 0), 0u) << "stderr should start with \"tsrepro: error: \"\n";
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "stderr should be exactly one line\n";
  if (!r.err.empty()) {
    EXPECT_EQ(r.err.back(), '\n');
  }
  EXPECT_NE(r.err.find(must_mention), std::string::npos) << "stderr should name '" << must_mention << "'\n";
  EXPECT_EQ(r.stray_processes, 0u);
}

// `tsrepro import` that must fail as bad input and leave `dir` exactly as it was (no CASE, no
// ".CASE.tmp-*" sibling, no scratch directories: TMPDIR points at `dir`).
void expect_import_rejected(const TempDir& dir, const Args& args, const std::string& case_path,
                            const std::string& must_mention) {
  const std::set<std::string> before = list_dir(dir.path());
  const Result r = tsrepro(args, {dir.path().string()});
  expect_bad_input(r, must_mention);
  EXPECT_FALSE(fs::exists(fs::symlink_status(case_path))) << case_path << " was left behind\n" << r.describe();
  const fs::path parent = fs::path(case_path).parent_path();
  EXPECT_TRUE(temp_siblings(parent, fs::path(case_path).filename().string()).empty())
      << "hidden temp sibling left in " << parent << ": " << join(list_dir(parent));
  EXPECT_EQ(list_dir(dir.path()), before) << "the directory changed\n" << r.describe();
}

Args import_args(const std::string& source, const std::string& inputs, const std::string& out) {
  return {"import", source, "--inputs", inputs, "-o", out};
}

Args import_spec_args(const std::string& source, const std::string& spec, const std::string& out) {
  return {"import", source, "--input-spec", spec, "-o", out};
}

std::string round_line(const std::string& graph_ir) {
  const size_t at = graph_ir.find("= aten::round(");
  if (at == std::string::npos) return "";
  const size_t start = graph_ir.rfind('\n', at) + 1;
  return graph_ir.substr(start, graph_ir.find('\n', at) - start);
}

std::string only_run_dir(const std::string& dir) {
  const std::set<std::string> runs = list_dir(dir);
  EXPECT_EQ(runs.size(), 1u) << join(runs);
  if (runs.empty()) return dir + "/missing";
  EXPECT_TRUE(std::regex_match(*runs.begin(), std::regex(R"(run_\d{8}-\d{6}-pid_\d+)"))) << *runs.begin();
  return dir + "/" + *runs.begin();
}

json read_case_json(const std::string& case_dir) {
  try {
    return json::parse(read_text(fs::path(case_dir) / "case.json"));
  } catch (const std::exception& e) {
    ADD_FAILURE() << case_dir << "/case.json does not parse: " << e.what();
    return json::object();
  }
}

size_t repro_py_code_lines(const std::string& source) {
  std::istringstream in(source);
  size_t code = 0;
  bool in_data = false;
  for (std::string line; std::getline(in, line);) {
    const bool data_start = line.rfind("GRAPH = ", 0) == 0 || line.rfind("EDITED = ", 0) == 0 ||
                            line.rfind("INPUTS = ", 0) == 0 || line.rfind("CASE_MODULE = ", 0) == 0;
    if (data_start) {
      in_data = line.back() == '(' || line.back() == '[' || line.find("(  #") != std::string::npos;
      continue;
    }
    // The model's classes, and the comparison: tsrepro's own rules, the same in every repro.py (what
    // repro.cpp includes from tsrepro_compare.h).
    if (line.rfind("class Repro(", 0) == 0 || line.rfind("class Edited(", 0) == 0 ||
        line.rfind("def difference(", 0) == 0) {  // the model's classes: up to the next top-level line
      in_data = true;
      continue;
    }
    if (in_data) {
      if (line.empty() || line[0] == ' ' || line[0] == ']' || line[0] == ')') continue;
      in_data = false;
    }
    const auto first = line.find_first_not_of(' ');
    if (first == std::string::npos || line[first] == '#') continue;
    ++code;
  }
  return code;
}

size_t repro_cpp_code_lines(const std::string& source) {
  std::istringstream in(source);
  size_t code = 0;
  bool in_data = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("const char* const kGraph =", 0) == 0 || line.rfind("const char* const kEdited =", 0) == 0 ||
        line.rfind("const char kInputs[] =", 0) == 0 || line.rfind("const char kCaseModule[] =", 0) == 0 ||
        line.rfind("const char* const kForward =", 0) == 0 ||
        line.rfind("const char* const kEditedForward =", 0) == 0) {
      in_data = true;
      continue;
    }
    if (in_data && line.rfind("    \"", 0) == 0) continue;
    in_data = false;
    const auto first = line.find_first_not_of(' ');
    if (first == std::string::npos || line.compare(first, 2, "//") == 0) continue;
    ++code;
  }
  return code;
}

namespace {

// The signal a crash signature names.
int signal_of(const std::string& signature) {
  static const std::map<std::string, int> kSignals = {{"crash:SIGSEGV", SIGSEGV}, {"crash:SIGABRT", SIGABRT},
                                                      {"crash:SIGBUS", SIGBUS},   {"crash:SIGFPE", SIGFPE},
                                                      {"crash:SIGILL", SIGILL},   {"crash:SIGKILL", SIGKILL}};
  const auto found = kSignals.find(signature);
  return found == kSignals.end() ? -1 : found->second;
}

// tsrepro run's verdict reproduces the recorded failure: same status, and for a crash the same signal.
bool runner_reproduces(const json& verdict, const json& expected) {
  const std::string kind = expected.value("status", "");
  if (verdict.value("status", "") != kind) return false;
  return kind != "crash" || verdict.value("signature", "") == expected.value("signature", "");
}

// The short repro.py reproduces: exit 1, or death by the crash's signal (a crash is left to
// happen), or by SIGALRM for a hang.
bool repro_reproduces(const Result& r, const json& expected) {
  if (r.exited) return r.exit_code == 1;
  const std::string kind = expected.value("status", "");
  if (kind == "timeout") return r.term_signal == SIGALRM;
  return kind == "crash" && r.term_signal == signal_of(expected.value("signature", ""));
}

}  // namespace

size_t expect_repro_py_agrees_on_every_checkpoint(const std::string& out, const std::string& backend,
                                                  const std::string& timeout, const std::string& scratch,
                                                  TsreproRuns runs) {
  std::vector<std::string> dirs = {out + "/minified"};
  for (const std::string& name : list_dir(out + "/checkpoints")) dirs.push_back(out + "/checkpoints/" + name);
  size_t reproduced = 0;
  std::vector<std::string> module_form;  // scripted_ops.py's arguments: repro.py and graph.ir pairs
  for (const std::string& dir : dirs) {
    SCOPED_TRACE(dir);
    const json expected = read_case_json(dir)["expected_failure"];
    bool runner = true;  // minify accepted this directory because it failed so
    std::string run_out;
    if (runs == TsreproRuns::OnEveryDirectory || dir == dirs.front()) {
      const Result run = tsrepro({"run", dir, "--backend", backend, "--timeout", timeout, "--json"}, {scratch, 300});
      runner = runner_reproduces(run.stdout_json(), expected);
      run_out = run.out;
    }
    const Result repro = run_cmd(kPython, {dir + "/repro.py"}, {"", 300});
    EXPECT_EQ(repro_reproduces(repro, expected), runner) << expected.dump() << "\n" << run_out << repro.describe();
    reproduced += runner;
    if (read_text(dir + "/repro.py").find("\nclass Repro(") == std::string::npos) continue;
    module_form.insert(module_form.end(), {dir + "/repro.py", dir + "/graph.ir"});
  }
  // Every directory minify writes holds the failure: the agreement is on reproducing.
  EXPECT_EQ(reproduced, dirs.size());
  const size_t module_forms = module_form.size() / 2;
  if (module_forms > 0) {  // one process for all: a start of torch costs seconds
    module_form.insert(module_form.begin(), kFixtures + "scripted_ops.py");
    const Result ops = run_cmd(kPython, module_form, {"", 300});
    EXPECT_EQ(ops.exit_code, 0) << ops.describe();
  }
  std::cout << out << ": " << dirs.size() << " directories agree, " << module_forms << " in the module form\n";
  return module_forms;
}

}  // namespace tsrepro_test
