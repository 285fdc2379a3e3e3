// repro.py: a short, single-file Python reproducer of a case, for stock PyTorch (1.13 and 2.x).
//
// The script is repro/templates/repro_py/repro.py with its placeholders filled: the header, the
// graph, the inputs (written into the file exactly when they are small, else read from inputs.pt
// or drawn by a seeded generator), the reference and the tested backend as the few public calls
// that set them up (one section file per backend family), and a same()-style comparison. What it
// leaves out (verdict classes, signature matching, a child process) is `tsrepro run`'s job.
// Everything taken from the case goes through repro/python_literal.h or python_value_literal.h:
// no case can inject code into the script.

#include <cctype>
#include <cmath>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <torch/version.h>

#include "repro/describe.h"
#include "repro/python_literal.h"
#include "repro/python_value_literal.h"
#include "repro/template_fill.h"
#include "repro/templates_repro_py.h"  // generated from repro/templates/repro_py/
#include "runner/backends/inject.h"
#include "runner/extension_libraries.h"
#include "runner/inputs.h"
#include "tsrepro/compare.h"
#include "tsrepro/error.h"
#include "tsrepro/writer.h"

#ifndef TSREPRO_VERSION
#define TSREPRO_VERSION "unknown"
#endif

namespace tsrepro {
namespace {

// Inputs up to this many bytes of tensor data are written into repro.py itself.
constexpr size_t kInlineInputBytes = 4096;

std::string backend_family(const std::string& spec) { return spec.substr(0, spec.find(':')); }

void check_backend_has_python_version(const std::string& spec) {
  if (!find_backend(spec))
    throw UserError("repro.py: unknown backend '" + spec + "' (known: " + known_backends_text() + ")");
  // A backend needs a section file (repro/templates/repro_py/backend_<name>.py) to get a repro.py.
  static const std::set<std::string> kWithPythonVersion = {"eager", "jit", "nnc", "ofi", "inject"};
  if (!kWithPythonVersion.count(backend_family(spec)))
    throw UserError("repro.py: backend '" + spec + "' has no Python version yet (repro/templates/repro_py/)");
  if (backend_family(spec) == "inject" && spec.find('@') == std::string::npos)
    throw UserError("repro.py: backend '" + spec + "': write inject:<fault>@<op>");
}

const char* python_bool(bool value) { return value ? "True" : "False"; }

std::string joined(const std::vector<std::string>& parts, const std::string& separator) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : separator) + part;
  return text;
}

// The IR text as one literal per line, so that the script reads (and pastes) like the graph.
std::string ir_literal_lines(const std::string& ir) {
  std::vector<std::string> lines;
  for (size_t start = 0; start < ir.size();) {
    size_t end = ir.find('\n', start);
    end = end == std::string::npos ? ir.size() : end + 1;
    lines.push_back(python_string_literal(std::string_view(ir).substr(start, end - start)));
    start = end;
  }
  return lines.empty() ? "\"\"" : joined(lines, "\n    ");
}

std::string python_list(const std::vector<int64_t>& values) {
  std::vector<std::string> items;
  for (int64_t v : values) items.push_back(std::to_string(v));
  return "[" + joined(items, ", ") + "]";
}

size_t tensor_bytes(const c10::IValue& value) {
  if (value.isTensor()) return value.toTensor().defined() ? value.toTensor().nbytes() : 0;
  size_t total = 0;
  if (value.isTuple())
    for (const auto& item : value.toTupleRef().elements()) total += tensor_bytes(item);
  if (value.isList())
    for (const auto& item : value.toListRef()) total += tensor_bytes(item);
  return total;
}

bool uses_fake_inputs(const Case& c, const ReproSettings& s) { return s.run.fake_inputs || !c.values.has_value(); }

// One call of repro.py's fake() per tensor input; scalars are their values.
std::string fake_inputs_expression(const Case& c) {
  std::vector<std::string> items;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const InputSpec& spec = c.inputs[i];
    if (spec.kind != "tensor") {
      items.push_back(python_value_literal(make_fake_value(spec, 0, i)));
      continue;
    }
    const FakeTensorRecipe recipe = fake_tensor_recipe(spec);
    const bool exact_kind =
        recipe.dtype == at::kBool || !(c10::isFloatingType(recipe.dtype) || c10::isComplexType(recipe.dtype));
    std::string low, high;
    if (recipe.dtype == at::kBool) {
      low = "0", high = "1";
    } else if (exact_kind) {
      low = std::to_string(static_cast<int64_t>(std::ceil(recipe.lo)));
      high = std::to_string(static_cast<int64_t>(std::floor(recipe.hi)));
    } else {
      low = python_float_literal(recipe.lo), high = python_float_literal(recipe.hi);
    }
    items.push_back("fake(" + std::to_string(i) + ", torch." + dtype_name(recipe.dtype) + ", " +
                    python_list(spec.sizes) + ", " + (recipe.keep_strides ? python_list(spec.strides) : "None") + ", " +
                    low + ", " + high + ")");
  }
  return "[\n    " + joined(items, ",\n    ") + ",\n]";
}

// The inputs written out exactly, or nullopt when they are too large (or of a kind a literal
// cannot hold): then repro.py reads inputs.pt.
std::optional<std::string> inline_inputs_expression(const Case& c) {
  size_t bytes = 0;
  for (const c10::IValue& value : *c.values) bytes += tensor_bytes(value);
  if (bytes > kInlineInputBytes) return std::nullopt;
  std::vector<std::string> items;
  try {
    for (const c10::IValue& value : *c.values) items.push_back(python_value_literal(value));
  } catch (const UserError&) {
    return std::nullopt;
  }
  return items.empty() ? "[]" : "[\n    " + joined(items, ",\n    ") + ",\n]";
}

// ---- Backend sections ---------------------------------------------------------------------------

bool option_on(const BackendOptions& options, const std::string& key, bool fallback) {
  const auto found = options.find(key);
  if (found == options.end()) return fallback;
  return found->second == "1" || found->second == "true" || found->second == "on";
}

std::string nnc_section(const std::string& role, const BackendOptions& options) {
  TemplateFlags flags;
  if (!option_on(options, "inline", true)) flags.insert("no_inlining");
  if (option_on(options, "dynamic_shapes", false)) flags.insert("dynamic_shapes");
  if (option_on(options, "reductions", false)) flags.insert("reductions");
  std::string strategy;
  if (const auto found = options.find("strategy"); found != options.end()) {
    flags.insert("strategy");
    strategy = found->second == "dynamic" ? "\"DYNAMIC\"" : "\"STATIC\"";
  }
  return fill_template(templates::repro_py_backend_nnc, {{"ROLE", role}, {"STRATEGY", strategy}}, flags);
}

// ofi freezes a module: CaseModule holds the lifted inputs as buffers (or attributes), and its
// forward takes the graph's other inputs with their TorchScript types.
std::string ofi_section(const Case& c, const std::string& role, const BackendOptions& options) {
  std::vector<std::string> parameters, arguments, lifted, user_inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const std::string index = std::to_string(i);
    const torch::jit::Value* input = c.graph->inputs()[i];
    if (!c.inputs[i].lifted) {
      parameters.push_back("in_" + index + ": " + input->type()->annotation_str());
      arguments.push_back("in_" + index);
      user_inputs.push_back("inputs[" + index + "]");
      continue;
    }
    arguments.push_back("self.lifted_" + index);
    // m.eval() before freezing: the lifted `training` flags (self.bn1.training -> %bn1_training) are False.
    const std::string& name = input->debugName();
    const bool training_flag = input->type()->kind() == c10::TypeKind::BoolType && name.size() >= 8 &&
                               name.compare(name.size() - 8, 8, "training") == 0;
    lifted.push_back("\"lifted_" + index + "\": " + (training_flag ? "False" : "inputs[" + index + "]"));
  }
  TemplateFlags flags;
  if (option_on(options, "mkldnn", true)) flags.insert("mkldnn");
  return fill_template(templates::repro_py_backend_ofi,
                       {{"ROLE", role},
                        {"PARAMETERS", joined(parameters, ", ")},
                        {"ARGUMENTS", joined(arguments, ", ")},
                        {"LIFTED", "{" + joined(lifted, ", ") + "}"},
                        {"NUMERICS", python_bool(option_on(options, "numerics", true))},
                        {"USER_INPUTS", "[" + joined(user_inputs, ", ") + "]"}},
                       flags);
}

std::string inject_section(const InjectPlan& plan, const std::string& spec, const std::string& role) {
  TemplateFlags flags;
  std::string message;
  if (!plan.triggered || plan.fault == "accuracy") flags.insert("returns");
  if (plan.triggered) {
    if (plan.fault == "compile-error" || plan.fault == "runtime-error") {
      flags.insert("raises");
      message = std::string("tsrepro injected ") + (plan.fault == "compile-error" ? "compile" : "runtime") +
                " error at " + plan.op_text;
    }
    if (plan.fault == "abort" || plan.fault == "segfault" || plan.fault == "hang") flags.insert(plan.fault);
  }
  const bool injected = plan.triggered && plan.fault == "accuracy";
  return fill_template(templates::repro_py_backend_inject,
                       {{"ROLE", role},
                        {"SPEC", python_comment_text(spec)},
                        {"OPS", python_comment_text(plan.op_text)},
                        {"MESSAGE", python_string_literal(message)},
                        {"INJECTED", injected ? "INJECTED" : "GRAPH"}},
                       flags);
}

std::string backend_section(const Case& c, const std::string& spec, const BackendOptions& options,
                            const std::string& role, const std::optional<InjectPlan>& plan) {
  const std::string family = backend_family(spec);
  if (family == "eager") return fill_template(templates::repro_py_backend_eager, {{"ROLE", role}});
  if (family == "jit") return fill_template(templates::repro_py_backend_jit, {{"ROLE", role}});
  if (family == "nnc") return nnc_section(role, options);
  if (family == "ofi") return ofi_section(c, role, options);
  return inject_section(*plan, spec, role);
}

// Appends a top-level section with the two blank lines PEP 8 puts between them.
void append_section(std::string& source, const std::string& section) {
  const auto first = section.find_first_not_of('\n');
  if (first == std::string::npos) return;
  const auto last = section.find_last_not_of('\n');
  if (!source.empty()) source += "\n\n";
  source += section.substr(first, last - first + 1) + "\n";
}

// The annotations of CaseModule.forward: the user inputs' TorchScript types.
std::vector<std::string> forward_annotations(const Case& c) {
  std::vector<std::string> annotations;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (!c.inputs[i].lifted) annotations.push_back(c.graph->inputs()[i]->type()->annotation_str());
  return annotations;
}

bool mentions_word(const std::string& text, const std::string& word) {
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const bool starts = at == 0 || !std::isalnum(static_cast<unsigned char>(text[at - 1]));
    const size_t end = at + word.size();
    const bool ends = end == text.size() || !std::isalnum(static_cast<unsigned char>(text[end]));
    if (starts && ends) return true;
  }
  return false;
}

// "List, Optional": the typing names the annotations use, for the one import they need.
std::string annotation_typing_names(const Case& c) {
  std::vector<std::string> names;
  for (const char* name : {"Dict", "List", "Optional", "Tuple"})
    for (const std::string& annotation : forward_annotations(c))
      if (mentions_word(annotation, name)) {
        names.push_back(name);
        break;
      }
  return joined(names, ", ");
}

bool uses_tensor_annotation(const Case& c) {
  for (const std::string& annotation : forward_annotations(c))
    if (mentions_word(annotation, "Tensor")) return true;
  return false;
}

std::string gradient_inputs(const Case& c) {
  std::vector<std::string> indices;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const InputSpec& spec = c.inputs[i];
    if (spec.kind == "tensor" && (!spec.lifted || spec.requires_grad)) indices.push_back(std::to_string(i));
  }
  return "[" + joined(indices, ", ") + "]";
}

}  // namespace

std::string repro_py_source(const Case& c, const ReproSettings& s) {
  check_backend_has_python_version(s.run.ref);
  check_backend_has_python_version(s.run.backend);
  TemplateFlags flags;
  TemplateValues values;

  // Header.
  values["TITLE"] = python_comment_text(issue_title(c, s));
  values["VERSION"] = python_comment_text(TSREPRO_VERSION);
  values["LIBTORCH"] = python_comment_text(TORCH_VERSION);
  values["CPU"] = python_comment_text(cpu_model_name());
  values["EXPECTED_TEXT"] = python_comment_text(expected_failure_text(s));
  values["COMMAND"] = python_comment_text(s.command_line);
  if (!s.command_line.empty()) flags.insert("command");

  // The case.
  std::vector<std::string> libraries;
  for (const std::string& library : loaded_extension_libraries()) libraries.push_back(python_string_literal(library));
  values["LIBRARIES"] = "[" + joined(libraries, ", ") + "]";
  if (!libraries.empty()) flags.insert("libraries");
  values["GRAPH_IR"] = ir_literal_lines(graph_to_ir(*c.graph));
  std::optional<InjectPlan> plan;
  if (backend_family(s.run.backend) == "inject") plan = plan_inject(s.run.backend, *c.graph);
  if (plan && plan->triggered && plan->fault == "accuracy") {
    flags.insert("injected");
    values["INJECTED_IR"] = ir_literal_lines(graph_to_ir(*plan->graph));
    values["FIRST_OP"] = python_comment_text(plan->op_text.substr(0, plan->op_text.find('+')));
  }
  std::string input_helper;
  if (uses_fake_inputs(c, s)) {
    values["INPUTS"] = fake_inputs_expression(c);
    input_helper = fill_template(templates::repro_py_fake_inputs, {{"SEED", std::to_string(s.run.seed)}});
  } else if (auto literal = inline_inputs_expression(c)) {
    values["INPUTS"] = *literal;
  } else {
    values["INPUTS"] = "saved_inputs()";
    input_helper = templates::repro_py_saved_inputs;
    flags.insert("os");
  }
  // Defined right before INPUTS, which calls it, with PEP 8's blank lines around it.
  values["INPUT_HELPER"] = input_helper.empty() ? "" : "\n\n" + input_helper + "\n";
  if (c.graph->outputs().size() != 1) flags.insert(flags.count("injected") ? "packed_injected" : "packed");
  if (flags.count("packed_injected")) flags.insert("packed");
  values["EXPECTED"] = python_string_literal(s.expected_kind);
  values["EXIT_ON_EXCEPTION"] = s.expected_kind == "exception" ? "1" : "0";
  values["DEVICE"] = python_string_literal(s.run.device);
  values["TIMEOUT_S"] = std::to_string(static_cast<int64_t>(std::ceil(s.run.timeout_seconds)));
  if (s.run.device != "cpu") flags.insert("cuda");

  // Sections: the reference, the backend, the comparison.
  std::string sections;
  if (backend_family(s.run.ref) == "ofi" || backend_family(s.run.backend) == "ofi") {
    const std::string names = annotation_typing_names(c);
    values["TYPING_NAMES"] = names;
    if (!names.empty()) flags.insert("typing");
    if (uses_tensor_annotation(c)) flags.insert("tensor_annotation");
  }
  append_section(sections, backend_section(c, s.run.ref, {}, "reference", std::nullopt));
  append_section(sections, backend_section(c, s.run.backend, s.run.backend_options, "backend", plan));
  // Only an accuracy failure needs the comparison: for the others the exit status does not depend on it.
  if (s.expected_kind == "accuracy") {
    flags.insert("accuracy");
    flags.insert(s.run.compare.use_fp64 ? "fp64" : "no_fp64");
    const CompareOptions& cmp = s.run.compare;
    append_section(sections, fill_template(templates::repro_py_same, {{"TOL", python_float_literal(cmp.tol)},
                                                                      {"EQUAL_NAN", python_bool(cmp.equal_nan)},
                                                                      {"EXACT", python_bool(cmp.exact_dtype)}}));
  }
  if (s.run.backward)
    append_section(sections, fill_template(templates::repro_py_backward, {{"GRADIENT_INPUTS", gradient_inputs(c)}}));
  if (sections.find("os.") != std::string::npos) flags.insert("os");
  values["SECTIONS"] = sections.substr(0, sections.find_last_not_of('\n') + 1);

  // Imports the data needs.
  if (values["INPUTS"].find("math.") != std::string::npos) flags.insert("math");
  if (values["INPUTS"].find("base64.") != std::string::npos) flags.insert("base64");
  return fill_template(templates::repro_py_repro, values, flags);
}

}  // namespace tsrepro
