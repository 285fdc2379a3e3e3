// Verdicts, their JSON form, and failure signatures.

#include <csignal>
#include <regex>

#include "tsrepro/verdict.h"

using nlohmann::json;

namespace tsrepro {
namespace {

constexpr std::pair<Status, const char*> kStatusNames[] = {
    {Status::Pass, "pass"},   {Status::Exception, "exception"}, {Status::Accuracy, "accuracy"},
    {Status::Crash, "crash"}, {Status::Timeout, "timeout"},     {Status::Invalid, "invalid"}};

// The names in verdicts' JSON, the worker's phase lines and exception signatures.
constexpr std::pair<Phase, const char*> kPhaseNames[] = {
    {Phase::None, ""},         {Phase::Start, "start"},
    {Phase::Reference, "ref"}, {Phase::ReferenceCompile, "ref-compile"},
    {Phase::Fp64, "fp64"},     {Phase::Route, "route"},
    {Phase::Compile, "compile"}, {Phase::Run, "run"},
    {Phase::Backward, "backward"}};

std::string first_nonempty_line(const std::string& text) {
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (line.find_first_not_of(" \t\r") != std::string::npos) return line;
    start = end + 1;
  }
  return "";
}

// Masks what differs between two sightings of the same bug: addresses, paths, numbers (with their
// sign: a garbage value read as a tag is InvalidTag(16) once and InvalidTag(-96) the next). Digits
// that go on a name are the name's (TS2EPConverter, float32, conv2d): a number starts where no
// letter, digit or '_' comes before it.
std::string mask_variable_parts(std::string text) {
  static const std::regex hex("0x[0-9a-fA-F]+");
  static const std::regex path("(/[^\\s:'\"(),]+)+");
  // (?!x\?): the 0 of an address masked already is no number ("at 0x?", not "at Nx?").
  static const std::regex number("(^|[^A-Za-z0-9_])-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?(?!x\\?)");
  text = std::regex_replace(text, hex, "0x?");
  text = std::regex_replace(text, path, "<path>");
  return std::regex_replace(text, number, "$1N");
}

json diff_to_json(const OutputDiff& d) {
  return {{"path", d.path},       {"dtype", d.dtype},     {"ok", d.ok},
          {"max_abs", d.max_abs}, {"max_rel", d.max_rel}, {"nonfinite_mismatches", d.nonfinite_mismatches},
          {"reason", d.reason}};
}

OutputDiff diff_from_json(const json& j) {
  OutputDiff d;
  d.path = j.value("path", "");
  d.dtype = j.value("dtype", "");
  d.ok = j.value("ok", true);
  // JSON has no infinity: a null max_abs was an infinite (mismatched shape or type) difference.
  d.max_abs = j.contains("max_abs") && j["max_abs"].is_number() ? j["max_abs"].get<double>() : INFINITY;
  d.max_rel = j.contains("max_rel") && j["max_rel"].is_number() ? j["max_rel"].get<double>() : INFINITY;
  d.nonfinite_mismatches = j.value("nonfinite_mismatches", int64_t{0});
  d.reason = j.value("reason", "");
  return d;
}

}  // namespace

const char* status_name(Status s) {
  for (const auto& [status, name] : kStatusNames)
    if (status == s) return name;
  return "unknown";
}

Status status_from_name(const std::string& name) {
  for (const auto& [status, known] : kStatusNames)
    if (name == known) return status;
  throw std::invalid_argument("unknown verdict status '" + name + "'");
}

const char* phase_name(Phase p) {
  for (const auto& [phase, name] : kPhaseNames)
    if (phase == p) return name;
  return "unknown";
}

Phase phase_from_name(const std::string& name) {
  for (const auto& [phase, known] : kPhaseNames)
    if (name == known) return phase;
  throw std::invalid_argument("unknown evaluation phase '" + name + "'");
}

bool is_reference_phase(Phase p) {
  return p == Phase::None || p == Phase::Start || p == Phase::Reference || p == Phase::ReferenceCompile ||
         p == Phase::Fp64;
}

json verdict_to_json(const Verdict& v) {
  json outputs = json::array();
  for (const OutputDiff& d : v.outputs) outputs.push_back(diff_to_json(d));
  json j = {{"status", status_name(v.status)},
            {"phase", phase_name(v.phase)},
            {"signature", v.signature},
            {"message", v.message},
            {"outputs", outputs},
            {"seconds", v.seconds},
            {"compute_seconds", v.compute_seconds},
            {"compile_seconds", v.compile_seconds}};
  if (!v.backend_graph.empty()) j["backend_graph"] = v.backend_graph;
  return j;
}

Verdict verdict_from_json(const json& j) {
  Verdict v;
  v.status = status_from_name(j.at("status").get<std::string>());
  v.phase = phase_from_name(j.value("phase", ""));
  v.signature = j.value("signature", "");
  v.message = j.value("message", "");
  for (const json& d : j.value("outputs", json::array())) v.outputs.push_back(diff_from_json(d));
  v.backend_graph = j.value("backend_graph", "");
  v.seconds = j.value("seconds", 0.0);
  v.compute_seconds = j.value("compute_seconds", 0.0);
  v.compile_seconds = j.value("compile_seconds", 0.0);
  return v;
}

std::string exception_signature(Phase phase, const std::string& type, const std::string& message) {
  return std::string("exception:") + phase_name(phase) + ":" + type + ": " +
         mask_variable_parts(first_nonempty_line(message));
}

std::string crash_signature(int signal_number) { return "crash:" + signal_name(signal_number); }

std::string accuracy_signature(const std::string& dtype, Phase phase) {
  return phase == Phase::Backward ? "accuracy:backward:" + dtype : "accuracy:" + dtype;
}

std::string signal_name(int signal_number) {
  static const std::pair<int, const char*> kSignals[] = {
      {SIGSEGV, "SIGSEGV"}, {SIGABRT, "SIGABRT"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"}, {SIGILL, "SIGILL"},
      {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGTRAP, "SIGTRAP"}, {SIGSYS, "SIGSYS"}, {SIGPIPE, "SIGPIPE"}};
  for (const auto& [number, name] : kSignals)
    if (number == signal_number) return name;
  return "signal " + std::to_string(signal_number);
}

}  // namespace tsrepro
