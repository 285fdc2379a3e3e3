// repro.py: a short, single-file Python reproducer of a case, for stock PyTorch (1.13 and 2.x).
//
// The script is repro/templates/repro_py/repro.py with its placeholders filled: the header, the
// graph, the inputs (written into the file exactly when they are small, else read from inputs.pt
// or drawn by a seeded generator), the reference and the tested backend as the few public calls
// that set them up (one section file per backend family), and a same()-style comparison. What it
// leaves out (verdict classes, signature matching, a child process) is `tsrepro run`'s job.
// Everything taken from the case goes through repro/python_literal.h or python_value_literal.h:
// no case can inject code into the script.

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "repro/describe.h"
#include "repro/python_literal.h"
#include "repro/python_value_literal.h"
#include "repro/reproducer_case.h"
#include "repro/template_fill.h"
#include "repro/templates_repro_py.h"  // generated from repro/templates/repro_py/
#include "runner/backends/inject.h"
#include "runner/extension_libraries.h"
#include "runner/inputs.h"
#include "tsrepro/compare.h"
#include "tsrepro/error.h"
#include "tsrepro/writer.h"

namespace tsrepro {
namespace {

const char* python_bool(bool value) { return value ? "True" : "False"; }

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
  if (tensor_data_bytes(*c.values) > kInlineInputBytes) return std::nullopt;
  std::vector<std::string> items;
  try {
    for (const c10::IValue& value : *c.values) items.push_back(python_value_literal(value));
  } catch (const UserError&) {
    return std::nullopt;
  }
  return items.empty() ? "[]" : "[\n    " + joined(items, ",\n    ") + ",\n]";
}

// ---- Backend sections ---------------------------------------------------------------------------

std::string nnc_section(const std::string& role, const BackendOptions& options, const TemplateFlags& random) {
  TemplateFlags flags = nnc_option_flags(options);
  flags.insert(random.begin(), random.end());
  return fill_template(templates::repro_py_backend_nnc,
                       {{"ROLE", role}, {"STRATEGY", python_string_literal(nnc_fusion_strategy(options))}}, flags);
}

// ofi freezes CASE_MODULE (the graph as a module's forward, its lifted inputs as buffers); the
// frozen forward takes the other inputs.
std::string ofi_section(const Case& c, const std::string& role, const BackendOptions& options) {
  std::vector<std::string> user_inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (!c.inputs[i].lifted) user_inputs.push_back("inputs[" + std::to_string(i) + "]");
  TemplateFlags flags = random_number_flags(*c.graph);
  if (backend_option_on(options, "mkldnn", true)) flags.insert("mkldnn");
  return fill_template(templates::repro_py_backend_ofi,
                       {{"ROLE", role},
                        {"NUMERICS", python_bool(backend_option_on(options, "numerics", true))},
                        {"USER_INPUTS", "[" + joined(user_inputs, ", ") + "]"}},
                       flags);
}

std::string inject_section(const InjectPlan& plan, const std::string& spec, const std::string& role,
                           bool empty_inputs) {
  InjectSection parts = inject_section_parts(plan);
  if (empty_inputs && parts.flags.erase("returns")) parts.flags.insert("returns_empty_inputs");
  return fill_template(templates::repro_py_backend_inject,
                       {{"ROLE", role},
                        {"SPEC", python_comment_text(spec)},
                        {"OPS", python_comment_text(plan.op_text)},
                        {"MESSAGE", python_string_literal(parts.message)},
                        {"INJECTED", parts.runs_injected_graph ? "INJECTED" : "GRAPH"}},
                       parts.flags);
}

// Whether an input is an empty list or dict, whose type torch._C._jit_interpret_graph cannot
// infer from the value: the interpreted sections then build it in the graph (interpretable.py).
bool has_empty_container_input(const std::vector<c10::IValue>& inputs) {
  return std::any_of(inputs.begin(), inputs.end(), [](const c10::IValue& v) {
    return (v.isList() && v.toListRef().empty()) || (v.isGenericDict() && v.toGenericDict().empty());
  });
}

std::string backend_section(const Case& c, const std::string& spec, const BackendOptions& options,
                            const std::string& role, const std::optional<InjectPlan>& plan, bool empty_inputs) {
  const std::string family = backend_family(spec);
  const TemplateFlags random = random_number_flags(*c.graph);
  TemplateFlags interpreter_flags = random;
  if (empty_inputs) interpreter_flags.insert("empty_inputs");
  if (family == "eager") return fill_template(templates::repro_py_backend_eager, {{"ROLE", role}}, interpreter_flags);
  if (family == "jit") return fill_template(templates::repro_py_backend_jit, {{"ROLE", role}}, random);
  if (family == "nnc") return nnc_section(role, options, random);
  if (family == "ofi") return ofi_section(c, role, options);
  return inject_section(*plan, spec, role, empty_inputs);
}

}  // namespace

std::string repro_py_source(const Case& c, const ReproSettings& s) {
  return repro_py_source(c, s, case_module_archive(c, s));
}

std::string repro_py_source(const Case& c, const ReproSettings& s, const std::optional<std::string>& case_module) {
  // A backend needs a section file (repro/templates/repro_py/backend_<name>.py) to get a repro.py.
  static const std::set<std::string> kWithPythonSection = {"eager", "jit", "nnc", "ofi", "inject"};
  check_backend_has_section(s.run.ref, "repro.py", kWithPythonSection);
  check_backend_has_section(s.run.backend, "repro.py", kWithPythonSection);
  TemplateFlags flags;
  TemplateValues values;
  add_common_values(c, s, python_comment_text, python_string_literal, values, flags);

  // The case.
  std::vector<std::string> libraries;
  for (const std::string& library : loaded_extension_libraries()) libraries.push_back(python_string_literal(library));
  values["LIBRARIES"] = "[" + joined(libraries, ", ") + "]";
  if (!libraries.empty()) flags.insert("libraries");
  values["GRAPH_IR"] = ir_literal_lines(reproducer_graph_ir(c, s));
  std::optional<InjectPlan> plan;
  if (backend_family(s.run.backend) == "inject") plan = plan_inject(s.run.backend, *c.graph);
  values["FAULT_OP"] = "";
  const std::optional<InjectSection> injected =
      plan ? std::optional<InjectSection>(inject_section_parts(*plan)) : std::nullopt;
  if (injected && injected->runs_injected_graph) {
    flags.insert("injected");
    values["INJECTED_IR"] = ir_literal_lines(graph_to_ir(*plan->graph));
    values["FIRST_OP"] = python_comment_text(plan->op_text.substr(0, plan->op_text.find('+')));
    values["FAULT_EDIT"] = python_comment_text(inject_edit_text(plan->fault));
    // The op the graph now calls, defined before the graph is parsed (two blank lines around it).
    if (injected->flags.count("backward_error"))
      values["FAULT_OP"] = "\n" + std::string(templates::repro_py_backward_error_op) + "\n";
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

  // Sections: the reference, the backend, the comparison.
  std::string sections;
  if (case_module) {
    flags.insert("ofi");
    const bool inline_module = case_module->size() <= kInlineModuleBytes;
    flags.insert(inline_module ? "case_module_inline" : "case_module_file");
    if (inline_module) values["CASE_MODULE_BYTES"] = python_bytes_lines(*case_module, "    ");
    if (!inline_module) flags.insert("os");
  }
  const bool empty_inputs = has_empty_container_input(reproducer_input_values(c, s));
  if (empty_inputs) append_section(sections, std::string(templates::repro_py_interpretable), 2);
  append_section(sections, backend_section(c, s.run.ref, {}, "reference", std::nullopt, empty_inputs), 2);
  append_section(sections, backend_section(c, s.run.backend, s.run.backend_options, "backend", plan, empty_inputs),
                 2);
  // Only an accuracy failure needs the comparison: for the others the exit status does not depend on it.
  if (s.expected_kind == "accuracy") {
    flags.insert("accuracy");
    flags.insert(s.run.compare.use_fp64 ? "fp64" : "no_fp64");
    const CompareOptions& cmp = s.run.compare;
    append_section(sections,
                   fill_template(templates::repro_py_same, {{"TOL", python_float_literal(cmp.tol)},
                                                            {"EQUAL_NAN", python_bool(cmp.equal_nan)},
                                                            {"EXACT", python_bool(cmp.exact_dtype)}}),
                   2);
  }
  if (s.run.backward)
    append_section(sections,
                   fill_template(templates::repro_py_backward,
                                 {{"GRADIENT_INPUTS", "[" + joined(gradient_input_indices(c), ", ") + "]"}}),
                   2);
  if (sections.find("os.") != std::string::npos) flags.insert("os");
  values["SECTIONS"] = sections.substr(0, sections.find_last_not_of('\n') + 1);

  // Imports the data needs.
  if (values["INPUTS"].find("math.") != std::string::npos) flags.insert("math");
  if (values["INPUTS"].find("base64.") != std::string::npos) flags.insert("base64");
  return fill_template(templates::repro_py_repro, values, flags);
}

}  // namespace tsrepro
