// repro.cpp + CMakeLists.txt: a standalone libtorch program that runs a case's graph in the
// TorchScript interpreter (the reference) and with the tested backend, compares them as tsrepro
// does, and exits 1 when the recorded failure reproduces.
//
// The program is the same for every case except for three generated parts: the header comment,
// the case data (graph IR, input specs) and the recorded settings. The rest is fixed text, real
// files under repro/templates/repro_cpp/ that the build embeds, written to read like a
// hand-written program, because it ends up pasted into bug reports.
// Everything that comes from the case goes through repro/cpp_literal.h: nothing in a graph or a
// command line can become code.

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include <sys/utsname.h>

#include <torch/script.h>
#include <torch/version.h>

#include "repro/cpp_literal.h"
#include "repro/templates_repro_cpp.h"  // generated from repro/templates/repro_cpp/
#include "runner/extension_libraries.h"
#include "runner/inputs.h"
#include "tsrepro/error.h"
#include "tsrepro/writer.h"

#ifndef TSREPRO_VERSION
#define TSREPRO_VERSION "unknown"
#endif

namespace tsrepro {
namespace {

// ---- Fixed parts of the generated program -------------------------------------------------------

const char* const kIncludes = templates::repro_cpp_includes;

const char* const kInputSpecDefinition = templates::repro_cpp_input_spec_definition;

const char* const kInputsSection = templates::repro_cpp_inputs;

const char* const kBackendsSection = templates::repro_cpp_backends;

const char* const kFailuresSection = templates::repro_cpp_failures;

const char* const kChildSection = templates::repro_cpp_child;

const char* const kCompareSection = templates::repro_cpp_compare;

const char* const kMainSection = templates::repro_cpp_main;

// ---- Generated parts ----------------------------------------------------------------------------

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) != 0) continue;
    const size_t colon = line.find(':');
    const size_t start = colon == std::string::npos ? std::string::npos : line.find_first_not_of(" \t", colon + 1);
    if (start != std::string::npos) return line.substr(start);
  }
  struct utsname names {};
  return uname(&names) == 0 ? std::string(names.machine) : "unknown";
}

std::string options_text(const BackendOptions& options) {
  std::string text;
  for (const auto& [key, value] : options) text += (text.empty() ? "" : " ") + key + "=" + value;
  return text;
}

std::string header_comment(const ReproSettings& s) {
  const std::string expected =
      s.expected_kind.empty() ? "any failure of the backend" : s.expected_kind + " (" + s.expected_signature + ")";
  std::ostringstream out;
  out << "// Reproducer for a TorchScript failure, written by tsrepro " << cpp_comment_text(TSREPRO_VERSION) << ".\n"
      << "//\n"
      << "//   expected:  " << cpp_comment_text(expected) << "\n"
      << "//   backend:   " << cpp_comment_text(s.run.backend)
      << (s.run.backend_options.empty() ? "" : " (" + cpp_comment_text(options_text(s.run.backend_options)) + ")")
      << "\n"
      << "//   inputs:    " << (s.run.fake_inputs ? "fake, seed " + std::to_string(s.run.seed) : "real (inputs.pt)")
      << ", device " << cpp_comment_text(s.run.device) << (s.run.backward ? ", with backward" : "") << "\n"
      << "//   made with: libtorch " << cpp_comment_text(TORCH_VERSION) << " on " << cpp_comment_text(cpu_model())
      << "\n"
      << "//   command:   " << cpp_comment_text(s.command_line.empty() ? "(not recorded)" : s.command_line) << "\n"
      << "//\n"
      << "// Build and run (CMakeLists.txt is beside this file; add -DCMAKE_PREFIX_PATH=<libtorch> for\n"
      << "// a libtorch outside the system paths):\n"
      << "//   cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build && ./build/repro\n"
      << "//\n"
      << "// It runs the graph below in the TorchScript interpreter (the reference) and with the tested\n"
      << "// backend, in a child process so that a crash or a hang is seen; compares the outputs as\n"
      << "// tsrepro does; prints the verdict; exits 1 when the expected failure reproduces, 0 when it\n"
      << "// does not, 2 when it cannot run. `./build/repro --help` lists the flags that override the\n"
      << "// recorded settings (another backend, fake inputs, a timeout).\n";
  return out.str();
}

// The custom-operator libraries the graph needs (tsrepro --load-library), loaded before parsing.
std::string extension_libraries_literal() {
  std::string out = "const char* const kExtensionLibraries[] = {";
  for (const std::string& library : loaded_extension_libraries()) out += cpp_string_literal(library) + ", ";
  return out + "nullptr};\n";
}

std::string case_section_intro(const Case& c) {
  return "\n// ---- The case -----------------------------------------------------------------------------------\n\n"
         "// The failing graph (the case's graph.ir holds the same text).\n"
         "const char* const kGraphIr =\n    " +
         cpp_string_lines(graph_to_ir(*c.graph), "    ") + ";\n" + extension_libraries_literal();
}

// The at:: constant that names a dtype in C++ source; nullopt for dtypes fake inputs cannot have.
std::optional<std::string> dtype_constant(c10::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return "at::kFloat";
    case at::kDouble:
      return "at::kDouble";
    case at::kHalf:
      return "at::kHalf";
    case at::kBFloat16:
      return "at::kBFloat16";
    case at::kComplexFloat:
      return "at::kComplexFloat";
    case at::kComplexDouble:
      return "at::kComplexDouble";
    case at::kLong:
      return "at::kLong";
    case at::kInt:
      return "at::kInt";
    case at::kShort:
      return "at::kShort";
    case at::kChar:
      return "at::kChar";
    case at::kByte:
      return "at::kByte";
    case at::kBool:
      return "at::kBool";
    default:
      return std::nullopt;
  }
}

// runner/inputs.cpp's test: strides that describe each element exactly once can be kept.
bool strides_are_dense(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  if (strides.size() != sizes.size()) return false;
  std::vector<size_t> order(sizes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  int64_t expected = 1;
  for (size_t dim : order) {
    if (sizes[dim] == 1) continue;
    if (strides[dim] != expected) return false;
    expected *= sizes[dim];
  }
  return true;
}

std::string int_list(const std::vector<int64_t>& values) {
  std::string text = "{";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + std::to_string(values[i]);
  return text + "}";
}

std::string int64_literal(int64_t value) {
  // -9223372036854775808 is not a literal in C++: it is minus a literal that does not fit.
  if (value == std::numeric_limits<int64_t>::min()) return "std::numeric_limits<int64_t>::min()";
  return "int64_t{" + std::to_string(value) + "}";
}

const char* origin_of(const InputSpec& spec) {
  if (!spec.lifted) return "Origin::Argument";
  return spec.requires_grad ? "Origin::Parameter" : "Origin::Constant";
}

std::string opaque_row(const InputSpec& spec) {
  std::string row = "opaque_input(" + cpp_string_literal(spec.name);
  if (spec.lifted) row += std::string(", ") + origin_of(spec);
  return row + ")";
}

// The same range make_fake_value draws from: the recorded one, or a default per dtype.
std::string tensor_row(const InputSpec& spec) {
  std::optional<c10::ScalarType> type;
  try {
    type = scalar_type_from_name(spec.dtype, "input '" + spec.name + "'");
  } catch (const UserError&) {
    return opaque_row(spec);
  }
  const std::optional<std::string> dtype = dtype_constant(*type);
  if (!dtype) return opaque_row(spec);
  const bool floating = c10::isFloatingType(*type) || c10::isComplexType(*type);
  double lo = spec.min.value_or(floating ? -1.0 : 0.0);
  double hi = spec.max.value_or(floating ? 1.0 : *type == at::kBool ? 1.0 : 9.0);
  if (hi < lo) std::swap(lo, hi);
  const std::vector<int64_t> strides =
      strides_are_dense(spec.sizes, spec.strides) ? spec.strides : std::vector<int64_t>{};
  std::string row = "tensor_input(" + cpp_string_literal(spec.name) + ", " + *dtype + ", " + int_list(spec.sizes) +
                    ", " + int_list(strides) + ", " + cpp_double_literal(lo) + ", " + cpp_double_literal(hi);
  if (spec.lifted) row += std::string(", ") + origin_of(spec);
  return row + ")";
}

// A scalar's recorded value as C++; nullopt when it cannot be written (then only real inputs work).
std::optional<std::string> scalar_value(const InputSpec& spec) {
  const nlohmann::json& v = spec.value;
  try {
    if (spec.kind == "none") return std::string("c10::IValue()");
    if (spec.kind == "int" && v.is_number()) return int64_literal(v.get<int64_t>());
    if (spec.kind == "float" && v.is_number()) return cpp_double_literal(v.get<double>());
    if (spec.kind == "bool" && v.is_boolean()) return std::string(v.get<bool>() ? "true" : "false");
    if (spec.kind == "str" && v.is_string()) return "std::string(" + cpp_string_literal(v.get<std::string>()) + ")";
    if (spec.kind == "int[]" && v.is_array()) {
      std::string list;
      for (const nlohmann::json& item : v) list += (list.empty() ? "" : ", ") + int64_literal(item.get<int64_t>());
      return "std::vector<int64_t>{" + list + "}";
    }
  } catch (const nlohmann::json::exception&) {
  }
  return std::nullopt;
}

std::string input_row(const InputSpec& spec) {
  if (spec.kind == "tensor") return tensor_row(spec);
  if (auto value = scalar_value(spec))
    return "scalar_input(" + cpp_string_literal(spec.name) + ", " + *value +
           (spec.lifted ? std::string(", ") + origin_of(spec) : "") + ")";
  return opaque_row(spec);
}

std::string inputs_table(const Case& c) {
  std::string out = "\nconst std::vector<InputSpec> kInputs = {\n";
  for (const InputSpec& spec : c.inputs) out += "    " + input_row(spec) + ",\n";
  return out + "};\n";
}

std::string bool_text(bool value) { return value ? "true" : "false"; }

std::string options_initializer(const BackendOptions& options) {
  std::string text;
  for (const auto& [key, value] : options)
    text += (text.empty() ? "" : ", ") + std::string("{") + cpp_string_literal(key) + ", " + cpp_string_literal(value) +
            "}";
  return "{" + text + "}";
}

std::string settings_struct(const ReproSettings& s, bool fake_inputs) {
  std::ostringstream out;
  out << "\n// How tsrepro saw the failure. The command-line flags override these (--help).\n"
      << "struct Settings {\n"
      << "  std::string ref = " << cpp_string_literal(s.run.ref.empty() ? "eager" : s.run.ref) << ";\n"
      << "  std::string backend = " << cpp_string_literal(s.run.backend) << ";\n"
      << "  std::map<std::string, std::string> backend_options = " << options_initializer(s.run.backend_options)
      << ";\n"
      << "  std::string device = " << cpp_string_literal(s.run.device.empty() ? "cpu" : s.run.device) << ";\n"
      << "  bool fake_inputs = " << bool_text(fake_inputs) << ";\n"
      << "  uint64_t seed = " << s.run.seed << ";\n"
      << "  double timeout_seconds = " << cpp_double_literal(s.run.timeout_seconds)
      << ";  // a longer backend run is a hang\n"
      << "  bool backward = " << bool_text(s.run.backward) << ";  // also compare input gradients of a scalar loss\n"
      << "  // Output comparison, as torch._dynamo.utils.same() does it.\n"
      << "  double tol = " << cpp_double_literal(s.run.compare.tol) << ";\n"
      << "  bool cos_similarity = " << bool_text(s.run.compare.cos_similarity) << ";\n"
      << "  bool equal_nan = " << bool_text(s.run.compare.equal_nan) << ";\n"
      << "  bool exact_dtype = " << bool_text(s.run.compare.exact_dtype) << ";\n"
      << "  bool ignore_non_fp = " << bool_text(s.run.compare.ignore_non_fp) << ";\n"
      << "  bool use_fp64 = " << bool_text(s.run.compare.use_fp64)
      << ";  // an fp64 run may excuse an allclose failure\n"
      << "  // The verdict status that means \"reproduced\" (empty: any failure), and tsrepro's signature.\n"
      << "  std::string expected_kind = " << cpp_string_literal(s.expected_kind) << ";\n"
      << "  std::string expected_signature = " << cpp_string_literal(s.expected_signature) << ";\n"
      << "  std::string case_dir = REPRO_DIR;  // where inputs.pt is\n"
      << "  bool show_graph = false;  // print the graph the executor ran\n"
      << "};\n";
  return out.str();
}

}  // namespace

std::string repro_cpp_source(const Case& c, const ReproSettings& settings) {
  // A case without real values can only be run with fake ones.
  const bool fake_inputs = settings.run.fake_inputs || !c.values;
  return header_comment(settings) + kIncludes + case_section_intro(c) + kInputSpecDefinition + inputs_table(c) +
         settings_struct(settings, fake_inputs) + kInputsSection + kBackendsSection + kFailuresSection + kChildSection +
         kCompareSection + kMainSection;
}

std::string repro_cmake_source() { return templates::repro_cpp_cmake_lists; }

std::map<std::string, std::string> reproducer_files(const Case& c, const ReproSettings& settings) {
  return {{"repro.py", repro_py_source(c, settings)},
          {"repro.cpp", repro_cpp_source(c, settings)},
          {"CMakeLists.txt", repro_cmake_source()}};
}

}  // namespace tsrepro
