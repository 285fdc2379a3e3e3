// repro.py: a standalone Python reproducer of a case, for stock PyTorch.
//
// The script mirrors what tsrepro's runner does (runner/evaluate.cpp, runner/backends/,
// runner/compare.cpp, runner/inputs.cpp): reference in the script's own process, tested backend
// in a child process (a crash or hang becomes a verdict), same()-style comparison, the same
// verdict statuses and signatures. Everything taken from the case (IR text, names, values, the
// command line) goes through repro/python_literal.h: no case can inject code into the script.
//
// The source is assembled from fixed Python sections (real files under repro/templates/repro_py/,
// which the build embeds) and generated parts: the header comment, the settings, the IR text, the input specs and the
// backend table. Only the backends the case needs are included, so the script stays short enough to paste into a bug
// report.

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <torch/version.h>

#include "repro/python_literal.h"
#include "repro/templates_repro_py.h"  // generated from repro/templates/repro_py/
#include "runner/extension_libraries.h"
#include "tsrepro/error.h"
#include "tsrepro/writer.h"

#ifndef TSREPRO_VERSION
#define TSREPRO_VERSION "unknown"
#endif

namespace tsrepro {
namespace {

// ---- Fixed Python sections: the files of repro/templates/repro_py/ --------------------------------

constexpr const char* kImports = templates::repro_py_imports;

constexpr const char* kInputsAndGraph = templates::repro_py_inputs_and_graph;

constexpr const char* kEagerBackend = templates::repro_py_eager_backend;

constexpr const char* kProfilingExecutor = templates::repro_py_profiling_executor;

constexpr const char* kJitBackend = templates::repro_py_jit_backend;

constexpr const char* kNncBackend = templates::repro_py_nnc_backend;

constexpr const char* kOfiBackend = templates::repro_py_ofi_backend;

constexpr const char* kInjectBackend = templates::repro_py_inject_backend;

constexpr const char* kRunning = templates::repro_py_running;

constexpr const char* kComparison = templates::repro_py_comparison;

constexpr const char* kVerdictAndMain = templates::repro_py_verdict_and_main;

// ---- Generated parts ----------------------------------------------------------------------------

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// What the header says the repro was made on: /proc/cpuinfo's model name (x86) or the
// equivalent line of other architectures.
std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trimmed(line.substr(0, colon));
    const std::string value = trimmed(line.substr(colon + 1));
    if ((key == "model name" || key == "Hardware" || key == "cpu model") && !value.empty()) return value;
  }
  return "an unknown CPU";
}

// "nnc" for "nnc", "inject" for "inject:segfault@aten::relu".
std::string backend_family(const std::string& spec) { return spec.substr(0, spec.find(':')); }

void check_backend_has_python_version(const std::string& spec) {
  if (!find_backend(spec))
    throw UserError("repro.py: unknown backend '" + spec + "' (known: " + known_backends_text() + ")");
  // The backends with a Python version below (a new backend needs one before it gets a repro.py).
  static const std::set<std::string> kWithPythonVersion = {"eager", "jit", "nnc", "ofi", "inject"};
  if (!kWithPythonVersion.count(backend_family(spec)))
    throw UserError("repro.py: backend '" + spec + "' has no Python version yet (repro/repro_py.cpp)");
  if (backend_family(spec) == "inject" && spec.find('@') == std::string::npos)
    throw UserError("repro.py: backend '" + spec + "': write inject:<fault>@<op>");
}

std::string options_text(const BackendOptions& options) {
  std::string text;
  for (const auto& [key, value] : options) text += (text.empty() ? "" : ", ") + key + "=" + value;
  return text.empty() ? "" : " (" + text + ")";
}

bool uses_fake_inputs(const Case& c, const ReproSettings& settings) {
  return settings.run.fake_inputs || !c.values.has_value();  // a fake-only case has no inputs.pt
}

std::string header_comment(const Case& c, const ReproSettings& s) {
  std::ostringstream out;
  out << "#!/usr/bin/env python3\n"
      << "# Reproducer made by tsrepro " << TSREPRO_VERSION << " with libtorch " << TORCH_VERSION << " on "
      << python_comment_text(cpu_model_name()) << ".\n";
  if (!s.command_line.empty()) out << "# Command: " << python_comment_text(s.command_line) << "\n";
  out << "# Expected failure: "
      << (s.expected_kind.empty() ? "none recorded (any failure counts)" : python_comment_text(s.expected_kind));
  if (!s.expected_signature.empty()) out << ", signature " << python_comment_text(s.expected_signature);
  out << "\n# Reference " << python_comment_text(s.run.ref) << " vs backend " << python_comment_text(s.run.backend)
      << python_comment_text(options_text(s.run.backend_options)) << " on " << python_comment_text(s.run.device)
      << (s.run.backward ? ", with backward" : "") << ".\n# Inputs: "
      << (uses_fake_inputs(c, s) ? "fake, seed " + std::to_string(s.run.seed)
                                 : std::string("inputs.pt beside this file"))
      << ".\n"
      << "#\n"
      << "# Needs only PyTorch: `python3 repro.py` runs the graph below in the reference and in the\n"
      << "# tested backend (in a child process, so that a crash or a hang is observed, not suffered),\n"
      << "# compares the outputs like torch._dynamo.utils.same() and prints a verdict. Exit status:\n"
      << "# 1 when the expected failure reproduces, 0 when it does not, 2 when it cannot run here.\n";
  return out.str();
}

const char* python_bool(bool value) { return value ? "True" : "False"; }

std::string settings_block(const Case& c, const ReproSettings& s) {
  nlohmann::json options = nlohmann::json::object();
  for (const auto& [key, value] : s.run.backend_options) options[key] = value;
  const CompareOptions& cmp = s.run.compare;
  std::ostringstream out;
  out << "# ---- How tsrepro saw the failure " << std::string(65, '-') << "\n\n"
      << "REFERENCE = " << python_string_literal(s.run.ref) << "\n"
      << "BACKEND = " << python_string_literal(s.run.backend) << "\n"
      << "BACKEND_OPTIONS = " << python_literal(options) << "\n"
      << "DEVICE = " << python_string_literal(s.run.device) << "\n"
      << "BACKWARD = " << python_bool(s.run.backward) << "\n"
      << "# None: read inputs.pt beside this file; a number: make tsrepro's seeded fake inputs.\n"
      << "FAKE_INPUTS_SEED = " << (uses_fake_inputs(c, s) ? std::to_string(s.run.seed) : "None") << "\n"
      << "TIMEOUT_SECONDS = " << python_float_literal(s.run.timeout_seconds) << "  # a slower backend counts as hung\n"
      << "COMPARE = dict(tol=" << python_float_literal(cmp.tol)
      << ", cos_similarity=" << python_bool(cmp.cos_similarity) << ", equal_nan=" << python_bool(cmp.equal_nan)
      << ", exact_dtype=" << python_bool(cmp.exact_dtype)
      << ",\n               ignore_non_fp=" << python_bool(cmp.ignore_non_fp)
      << ", use_fp64=" << python_bool(cmp.use_fp64) << ")\n"
      << "EXPECTED_KIND = " << python_string_literal(s.expected_kind)
      << "  # the verdict status that means \"reproduced\"\n"
      << "EXPECTED_SIGNATURE = " << python_string_literal(s.expected_signature) << "\n"
      << "EXTENSION_LIBRARIES = [";
  for (const std::string& library : loaded_extension_libraries())
    out << python_string_literal(library) << (library == loaded_extension_libraries().back() ? "" : ", ");
  out << "]  # loaded with torch.ops.load_library before the graph is read\n";
  return out.str();
}

// The IR text as one literal per line, so that the script reads (and pastes) like the graph.
std::string graph_ir_block(const std::string& ir) {
  if (ir.empty()) return "GRAPH_IR = \"\"\n";
  std::string out = "GRAPH_IR = (\n";
  for (size_t start = 0; start < ir.size();) {
    size_t end = ir.find('\n', start);
    end = end == std::string::npos ? ir.size() : end + 1;
    out += "    " + python_string_literal(std::string_view(ir).substr(start, end - start)) + "\n";
    start = end;
  }
  return out + ")\n";
}

// One dict per graph input, in order: what tsrepro knows of it (case.json's "inputs"). Fields at
// their defaults (device cpu, no grad, not lifted) are left out to keep the lines short.
std::string input_spec_literal(const InputSpec& spec) {
  std::vector<std::pair<std::string, nlohmann::json>> fields = {{"name", spec.name}, {"kind", spec.kind}};
  if (spec.kind == "tensor") {
    fields.insert(fields.end(), {{"dtype", spec.dtype}, {"sizes", spec.sizes}, {"strides", spec.strides}});
    if (spec.device != "cpu") fields.emplace_back("device", spec.device);
    fields.emplace_back("min", spec.min ? nlohmann::json(*spec.min) : nlohmann::json());
    fields.emplace_back("max", spec.max ? nlohmann::json(*spec.max) : nlohmann::json());
  } else {
    fields.emplace_back("value", spec.value);
  }
  if (spec.requires_grad) fields.emplace_back("requires_grad", true);
  if (spec.lifted) fields.emplace_back("lifted", true);
  std::string dict;
  for (const auto& [key, value] : fields)
    dict += (dict.empty() ? "" : ", ") + python_string_literal(key) + ": " + python_literal(value);
  return "{" + dict + "}";
}

std::string input_specs_block(const std::vector<InputSpec>& specs) {
  std::string out = "INPUT_SPECS = [\n";
  for (const InputSpec& spec : specs) {
    out += "    " + input_spec_literal(spec) + ",";
    if (spec.lifted && !spec.lifted_from.empty()) out += "  # " + python_comment_text(spec.lifted_from);
    out += "\n";
  }
  return out + "]\n";
}

// The prepare_* function behind each backend spec the script uses.
std::string backend_table(const ReproSettings& s) {
  std::string table;
  std::set<std::string> listed;
  for (const std::string& spec : {s.run.ref, s.run.backend}) {
    if (!listed.insert(spec).second) continue;
    table += (table.empty() ? "" : ", ") + python_string_literal(spec) + ": prepare_" + backend_family(spec);
  }
  return "BACKENDS = {" + table + "}\n";
}

// ofi freezes a module: CaseModule is the case's graph as a scripted module holds it, its lifted
// inputs as buffers. Its forward takes the graph's other inputs, with their TorchScript types.
std::string case_module_block(const Case& c) {
  std::string parameters, arguments;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const std::string name = "in_" + std::to_string(i);
    if (c.inputs[i].lifted) {
      arguments += (arguments.empty() ? "" : ", ") + std::string("self.lifted_") + std::to_string(i);
      continue;
    }
    parameters += ", " + name + ": " + c.graph->inputs()[i]->type()->annotation_str();
    arguments += (arguments.empty() ? "" : ", ") + name;
  }
  return "CASE_GRAPH = None  # the graph as a TorchScript function, made by prepare_ofi\n\n\n"
         "class CaseModule(torch.nn.Module):\n"
         "    \"\"\"The graph as a scripted module holds it: the lifted parameters and buffers are buffers.\"\"\"\n\n"
         "    def __init__(self, lifted):\n"
         "        super().__init__()\n"
         "        for name, value in lifted.items():\n"
         "            if isinstance(value, torch.Tensor):\n"
         "                self.register_buffer(name, value)\n"
         "            else:  # a scalar attribute (training, eps, ...): scripting infers its type\n"
         "                setattr(self, name, value)\n\n"
         "    def forward(self" +
         parameters +
         "):\n"
         "        return CASE_GRAPH(" +
         arguments + ")\n";
}

// Only the backend sections the case needs: the script stays short enough to paste.
std::vector<const char*> backend_sections(const ReproSettings& s) {
  std::set<std::string> families = {"eager", backend_family(s.run.ref), backend_family(s.run.backend)};
  std::vector<const char*> sections = {kEagerBackend};
  if (families.count("jit") || families.count("nnc") || families.count("ofi")) sections.push_back(kProfilingExecutor);
  if (families.count("jit")) sections.push_back(kJitBackend);
  if (families.count("nnc")) sections.push_back(kNncBackend);
  if (families.count("ofi")) sections.push_back(kOfiBackend);
  if (families.count("inject")) sections.push_back(kInjectBackend);
  return sections;
}

// Appends a top-level section with the two blank lines PEP 8 puts between them.
void append_section(std::string& source, const std::string& section) {
  const auto first = section.find_first_not_of('\n');
  if (first == std::string::npos) return;
  const auto last = section.find_last_not_of('\n');
  if (!source.empty()) source += "\n\n";
  source += section.substr(first, last - first + 1) + "\n";
}

}  // namespace

std::string repro_py_source(const Case& c, const ReproSettings& settings) {
  check_backend_has_python_version(settings.run.ref);
  check_backend_has_python_version(settings.run.backend);
  std::string source = header_comment(c, settings);
  source += kImports;  // directly under the header, one blank line apart
  append_section(source, settings_block(c, settings));
  append_section(source, "# ---- The case: graph.ir and the inputs of case.json " + std::string(46, '-') + "\n\n" +
                             graph_ir_block(graph_to_ir(*c.graph)) + "\n" + input_specs_block(c.inputs));
  append_section(source, kInputsAndGraph);
  for (const char* section : backend_sections(settings)) append_section(source, section);
  if (backend_family(settings.run.backend) == "ofi" || backend_family(settings.run.ref) == "ofi")
    append_section(source, case_module_block(c));
  append_section(source, backend_table(settings));
  append_section(source, kRunning);
  append_section(source, kComparison);
  append_section(source, kVerdictAndMain);
  return source;
}

}  // namespace tsrepro
