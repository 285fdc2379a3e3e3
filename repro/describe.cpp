#include "repro/describe.h"

#include <sys/utsname.h>

#include <algorithm>
#include <fstream>

#include "tsrepro/backend.h"
#include "tsrepro/verdict.h"

namespace tsrepro {
namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

void collect_kinds(const torch::jit::Block* block, std::vector<std::string>& kinds) {
  static const std::vector<std::string> kPlumbing = {"prim::Constant",   "prim::ListConstruct", "prim::TupleConstruct",
                                                     "prim::ListUnpack", "prim::TupleUnpack",   "prim::GetAttr",
                                                     "prim::Return",     "prim::Param"};
  for (const torch::jit::Node* node : block->nodes()) {
    const std::string kind = node->kind().toQualString();
    const bool plumbing = std::find(kPlumbing.begin(), kPlumbing.end(), kind) != kPlumbing.end();
    if (!plumbing && std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
    for (const torch::jit::Block* inner : node->blocks()) collect_kinds(inner, kinds);
  }
}

// "aten::frac", "aten::addmm + aten::clamp", "a graph of 7 ops (aten::conv2d, aten::relu, ...)".
std::string subject_of(const std::vector<std::string>& ops, bool& plural) {
  plural = ops.size() > 1 && ops.size() <= 3;
  if (ops.empty()) return "a graph without ops";
  std::string text;
  const size_t shown = std::min<size_t>(ops.size(), 3);
  for (size_t i = 0; i < shown; ++i) text += (i ? (ops.size() <= 3 ? " + " : ", ") : "") + ops[i];
  if (ops.size() <= 3) return text;
  return "a graph of " + std::to_string(ops.size()) + " ops (" + text + ", ...)";
}

// "returns wrong values", "gets wrong gradients", "raises RuntimeError while compiling", "crashes with SIGSEGV",
// "hangs".
std::string failure_phrase(const ReproSettings& s, bool plural) {
  const std::optional<Status> status = s.failure.status;
  const std::string& sig = s.failure.signature;
  if (status == Status::Accuracy && sig.rfind(accuracy_signature("", Phase::Backward), 0) == 0)
    return plural ? "get wrong gradients" : "gets wrong gradients";
  if (status == Status::Accuracy) return plural ? "return wrong values" : "returns wrong values";
  if (status == Status::Timeout) return plural ? "hang" : "hangs";
  if (status == Status::Crash) {
    const std::string how = sig.rfind("crash:", 0) == 0 ? " with " + sig.substr(6) : "";
    return (plural ? "crash" : "crashes") + how;
  }
  if (status == Status::Exception) {
    // exception:<phase>:<Type>: <message>
    std::string phrase = plural ? "raise" : "raises";
    const size_t phase_end = sig.find(':', 10);
    if (sig.rfind("exception:", 0) == 0 && phase_end != std::string::npos) {
      const std::string phase = sig.substr(10, phase_end - 10);
      const size_t type_end = sig.find(": ", phase_end + 1);  // a type may have "::" in it (std::runtime_error)
      phrase +=
          " " + sig.substr(phase_end + 1, type_end == std::string::npos ? std::string::npos : type_end - phase_end - 1);
      if (phase == "compile") phrase += " while compiling";
      if (phase == "backward") phrase += " in backward";
      if (phase == "route") phrase += " on its way into the compiler";
    } else {
      phrase += " an exception";
    }
    return phrase;
  }
  return plural ? "fail" : "fails";
}

}  // namespace

std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trimmed(line.substr(0, colon));
    const std::string value = trimmed(line.substr(colon + 1));
    if ((key == "model name" || key == "Hardware" || key == "cpu model") && !value.empty()) return value;
  }
  struct utsname names {};
  return uname(&names) == 0 ? std::string(names.machine) : "an unknown CPU";
}

std::vector<std::string> interesting_ops(const torch::jit::Graph& graph) {
  std::vector<std::string> kinds;
  collect_kinds(graph.block(), kinds);
  return kinds;
}

std::string issue_title(const Case& c, const ReproSettings& s) {
  const BackendInfo* backend = find_backend(s.failure.run.backend);
  const std::string label = backend ? backend->issue_label : "[JIT]";
  const std::string under = backend ? backend->under : s.failure.run.backend;
  bool plural = false;
  const std::string subject = subject_of(interesting_ops(*c.graph), plural);
  std::string title = label + " " + subject + " " + failure_phrase(s, plural) + " under " + under;
  if (s.failure.run.device != "cpu") title += " on " + s.failure.run.device;
  if (s.failure.run.backward) title += " (backward)";
  // The pass the failure starts at, where `tsrepro explain --passes` named one (minify records it).
  const nlohmann::json passes = c.provenance.value("passes", nlohmann::json::object());
  if (passes.contains("pass") && passes["pass"].is_string()) {
    const std::string pass = passes["pass"].get<std::string>();
    title += " (bisected to " + pass.substr(0, pass.find(" (")) + ")";  // its ops, where it lists them, are the title's
  }
  return title;
}

std::string expected_failure_text(const ReproSettings& s) {
  if (!s.failure.status) return "any failure";
  std::string text = s.failure.status_text() + (s.failure.signature.empty() ? "" : " (" + s.failure.signature + ")");
  if (s.failure.flaky())
    text +=
        ", flaky: seen in " + std::to_string(s.failure.failed_runs) + " of " + std::to_string(s.failure.runs) + " runs";
  return text;
}

}  // namespace tsrepro
