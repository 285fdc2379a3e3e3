// repro.py: a short, single-file Python reproducer of a case, for stock PyTorch (1.13 and 2.x).
//
// The script is repro/templates/repro_py/repro.py with its placeholders filled: the header, the
// graph, the inputs (written into the file exactly when they are small, else read from inputs.pt
// or drawn by a seeded generator), the reference and the tested backend as the few public calls
// that set them up (each backend's section, backends/<id>/repro.py), and a same()-style comparison. What it
// leaves out (verdict classes, signature matching, a child process) is `tsrepro run`'s job.
// Everything taken from the case goes through repro/python_literal.h or python_value_literal.h:
// no case can inject code into the script.

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "backends/inject/inject.h"
#include "backends/inject/section.h"
#include "repro/backend_section.h"
#include "repro/describe.h"
#include "repro/environment.h"
#include "runner/formats/python_literal.h"
#include "repro/python_value_literal.h"
#include "repro/reproducer_case.h"
#include "repro/template_fill.h"
#include "repro/templates_repro_py.h"  // generated from repro/templates/repro_py/
#include "runner/case/extension_libraries.h"
#include "runner/case/inputs.h"
#include "tsrepro/compare.h"
#include "tsrepro/error.h"
#include "tsrepro/writer.h"

namespace tsrepro {
namespace {

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
std::vector<std::string> fake_input_expressions(const Case& c) {
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
  return items;
}

// The inputs written out exactly, or nullopt when they are too large (or of a kind a literal
// cannot hold): then repro.py reads inputs.pt.
std::optional<std::vector<std::string>> inline_input_expressions(const Case& c) {
  if (tensor_data_bytes(*c.values) > kInlineInputBytes) return std::nullopt;
  std::vector<std::string> items;
  try {
    for (const c10::IValue& value : *c.values) items.push_back(python_value_literal(value));
  } catch (const UserError&) {
    return std::nullopt;
  }
  return items;
}

std::string python_list_lines(const std::vector<std::string>& items) {
  return items.empty() ? "[]" : "[\n    " + joined(items, ",\n    ") + ",\n]";
}

// Every graph input's value as an expression (a literal, a fake() call, or SAVED[i] from
// inputs.pt) and the helper those expressions call.
struct InputCode {
  std::vector<std::string> values;
  std::string helper;
  bool saved = false;  // read from inputs.pt: the values are SAVED[i]
};

InputCode input_code(const Case& c, const ReproSettings& s) {
  InputCode code;
  if (uses_fake_inputs(c, s)) {
    code.values = fake_input_expressions(c);
    code.helper = fill_template(templates::repro_py_fake_inputs, {{"SEED", std::to_string(s.failure.run.seed)}});
  } else if (auto literals = inline_input_expressions(c)) {
    code.values = *literals;
  } else {
    code.saved = true;
    code.helper = templates::repro_py_saved_inputs;
    for (size_t i = 0; i < c.inputs.size(); ++i) code.values.push_back("SAVED[" + std::to_string(i) + "]");
  }
  return code;
}

// class Repro (or Injected, Repro with the injected fault): __init__ registers the lifted inputs,
// forward is the graph's code.
std::string module_class(const ModuleForm& form, const InputCode& inputs, const std::string& name,
                         const std::string& base, const std::string& comment, bool with_init) {
  std::vector<std::string> lines, training_flags;
  for (const ModuleAttribute& attribute : form.attributes) {
    if (attribute.training_flag) training_flags.push_back("self." + attribute.name + " = mode");
    const std::string value =
        attribute.value.isTensor() ? inputs.values.at(attribute.input) : python_value_literal(attribute.value);
    lines.push_back(attribute.value.isTensor()
                        ? "self.register_buffer(" + python_string_literal(attribute.name) + ", " + value + ")"
                        : "self." + attribute.name + " = " + value);
  }
  const std::string& forward = form.python_forward;
  TemplateFlags flags;
  if (with_init && !lines.empty()) flags.insert(flag::attributes);
  if (with_init && !training_flags.empty()) flags.insert(flag::training_flags);
  return fill_template(templates::repro_py_module_class,
                       {{"CLASS", name},
                        {"BASE", base},
                        {"COMMENT", comment},
                        {"ATTRIBUTES", with_init ? joined(lines, "\n        ") : ""},
                        {"TRAINING_FLAGS", with_init ? joined(training_flags, "\n        ") : ""},
                        // python_forward is indented one level, as the placeholder's line already is.
                        {"FORWARD", forward.substr(4, forward.find_last_not_of('\n') + 1 - 4)}},
                       flags);
}

// class Repro as eager PyTorch (the module route of PyTorch 2's backends): __init__ registers the
// lifted inputs and the graph's tensor constants, forward is plain Python.
std::string eager_module_class(const EagerModule& eager, const InputCode& inputs,
                               const std::vector<c10::IValue>& values) {
  std::vector<std::string> lines, training_flags;
  for (const EagerAttribute& attribute : eager.attributes) {
    if (attribute.training_flag) training_flags.push_back("self." + attribute.name + " = mode");
    const bool tensor = (attribute.input ? values.at(*attribute.input) : attribute.constant).isTensor();
    const std::string text =
        attribute.input ? inputs.values.at(*attribute.input) : python_value_literal(attribute.constant);
    lines.push_back(tensor ? "self.register_buffer(" + python_string_literal(attribute.name) + ", " + text + ")"
                           : "self." + attribute.name + " = " + text);
  }
  TemplateFlags flags;
  if (!lines.empty()) flags.insert(flag::attributes);
  if (!training_flags.empty()) flags.insert(flag::training_flags);
  const std::string& forward = eager.forward;
  return fill_template(templates::repro_py_module_class,
                       {{"CLASS", "Repro"},
                        {"BASE", "torch.nn.Module"},
                        {"COMMENT", "the minified graph as plain PyTorch: its state as attributes, its forward as code"},
                        {"ATTRIBUTES", joined(lines, "\n        ")},
                        {"TRAINING_FLAGS", joined(training_flags, "\n        ")},
                        {"FORWARD", forward.substr(4, forward.find_last_not_of('\n') + 1 - 4)}},
                       flags);
}

// PEP 8's two blank lines between top-level definitions, where values that span lines (the
// classes, the input helper) meet the template's own blank lines.
std::string at_most_two_blank_lines(const std::string& source) {
  std::string out;
  size_t newlines = 0;
  for (char ch : source) {
    newlines = ch == '\n' ? newlines + 1 : 0;
    if (newlines <= 3) out += ch;
  }
  return out;
}

// ---- Backend sections ---------------------------------------------------------------------------

// What every section's lines depend on besides its backend: the form of the model (the Repro
// class or IR text) and, for the IR form, whether an input is an empty list or dict.
struct SectionForm {
  bool module = false;
  bool eager = false;  // the module is eager PyTorch (the module route), not TorchScript's
  bool empty_inputs = false;
  TemplateFlags random;  // random_number_flags of the graph
  std::string device;    // the DEVICE literal the module moves to

  TemplateFlags flags() const {
    TemplateFlags flags = random;
    flags.insert(module ? flag::module : empty_inputs ? flag::empty_inputs : flag::graph_inputs);
    if (module) flags.insert(eager ? flag::eager_module : flag::scripted);
    return flags;
  }
  // A section's parameters: the reference of the module form gets fp64 too (Repro's own floats).
  std::string parameters() const { return module ? "inputs, fp64=False" : "inputs"; }
};

// The section of backend `spec` (backends/<id>/repro.py) as the function `role`.
RenderedSection backend_section(const Case& c, const std::string& spec, const BackendOptions& options,
                                const std::string& role, const std::optional<InjectPlan>& plan, const SectionForm& form,
                                const TemplateValues& program_values, TemplateFlags& program_flags) {
  const SectionRequest request{c,           kPythonDialect, spec,           options, plan ? &*plan : nullptr,
                               form.module, form.eager,    form.empty_inputs};
  return render_backend_section(request, {{"ROLE", role}, {"PARAMETERS", form.parameters()}, {"DEVICE", form.device}},
                                form.flags(), program_values, program_flags);
}

// Whether an input is an empty list or dict, whose type torch._C._jit_interpret_graph cannot
// infer from the value: the interpreted sections then build it in the graph (interpretable.py).
bool has_empty_container_input(const std::vector<c10::IValue>& inputs) {
  return std::any_of(inputs.begin(), inputs.end(), [](const c10::IValue& v) {
    return (v.isList() && v.toListRef().empty()) || (v.isGenericDict() && v.toGenericDict().empty());
  });
}

// The model's part of repro.py in the module form: the classes, the imports their annotations
// need, and the inputs forward takes.
void add_module_form(const ReproModules& modules, const InputCode& inputs, const InjectPlan* plan,
                     const std::vector<c10::IValue>& input_values, TemplateValues& values) {
  if (const std::optional<EagerModule>& eager = modules.eager) {
    values["CLASSES"] = "\n\n" + eager_module_class(*eager, inputs, input_values) + "\n\n";
    std::vector<std::string> imports;  // math comes with the data's imports (its #[math] line)
    for (const std::string& name : eager->imports)
      if (name != "math") imports.push_back("import " + name);
    values["TYPING_IMPORT"] = joined(imports, "\n");
    std::vector<std::string> forward_values;
    for (size_t i : eager->forward_inputs) forward_values.push_back(inputs.values.at(i));
    values["INPUTS"] = python_list_lines(forward_values);
    return;
  }
  std::string classes = module_class(modules.repro, inputs, "Repro", "torch.nn.Module",
                                     "the minified graph: its state as attributes, its forward as code", true);
  std::set<std::string> imports(modules.repro.python_imports.begin(), modules.repro.python_imports.end());
  if (modules.injected) {
    const std::string comment = "Repro with the injected fault at " +
                                python_comment_text(plan->op_text.substr(0, plan->op_text.find('+'))) + ": " +
                                python_comment_text(inject_edit_text(plan->fault));
    classes += "\n\n\n" + module_class(*modules.injected, inputs, "Injected", "Repro", comment, false);
    imports.insert(modules.injected->python_imports.begin(), modules.injected->python_imports.end());
  }
  values["CLASSES"] = "\n\n" + classes + "\n\n";
  values["TYPING_IMPORT"] = joined(std::vector<std::string>(imports.begin(), imports.end()), "\n");
  std::vector<std::string> forward_values;
  for (size_t i : modules.repro.forward_inputs) forward_values.push_back(inputs.values.at(i));
  values["INPUTS"] = python_list_lines(forward_values);
}

// A torch._inductor.config line as codegen_config() writes it, with a value that is a plain literal:
// what a header may hold as code. Anything else is written as a comment.
bool plain_config_line(const std::string& line) {
  static const std::regex kLine(
      R"(torch\._inductor\.config\.[A-Za-z_][A-Za-z0-9_.]* = (True|False|None|-?[0-9][0-9.e+-]*|'[^'\\\n]*'))");
  return std::regex_match(line, kLine);
}

// The header of a PyTorch 2 repro.py, as after_aot's: the versions, and the non-default
// torch._inductor.config values in force (repro/environment.h).
void add_pytorch2_environment(TemplateValues& values, TemplateFlags& flags) {
  const nlohmann::json& env = pytorch2_environment();
  if (!env.is_object()) return;
  auto fact = [&](const char* key, const char* unknown) {
    return python_comment_text(env.contains(key) && env[key].is_string() ? env[key].get<std::string>() : unknown);
  };
  flags.insert(flag::pt2_versions);
  values["TORCH_VERSION"] = fact("torch", "unknown");
  values["PYTHON_VERSION"] = fact("python", "unknown");
  values["CXX_COMPILER"] = fact("compiler", "C++ compiler unknown");
  std::vector<std::string> lines;
  for (const nlohmann::json& line : env.value("inductor_config", nlohmann::json::array()))
    if (line.is_string())
      lines.push_back(plain_config_line(line.get<std::string>()) ? line.get<std::string>()
                                                                 : "# " + python_comment_text(line.get<std::string>()));
  if (lines.empty()) return;
  flags.insert(flag::compiler_config);
  values["COMPILER_CONFIG"] = joined(lines, "\n");
}

}  // namespace

std::string repro_py_source(const Case& c, const ReproSettings& s) {
  return repro_py_source(c, s, repro_modules(c, s));
}

std::string repro_py_source(const Case& c, const ReproSettings& s, const ReproModules& modules) {
  TemplateFlags flags;
  TemplateValues values;
  add_common_values(c, s, python_comment_text, python_string_literal, values, flags);

  // The case.
  std::vector<std::string> libraries, packages;
  for (const ExtensionLibrary& library : libraries_of_case(c)) {
    libraries.push_back(python_string_literal(library.path));
    if (const std::string package = python_package_of(library.path); !package.empty())
      packages.push_back(python_string_literal(package));
  }
  values["LIBRARIES"] = "[" + joined(libraries, ", ") + "]";
  values["LIBRARY_PACKAGES"] = "[" + joined(packages, ", ") + "]";
  if (!libraries.empty()) flags.insert({flag::libraries, flag::os});
  if (!packages.empty()) flags.insert(flag::library_packages);
  std::optional<InjectPlan> plan;
  if (is_inject_spec(s.failure.run.backend)) plan = plan_inject(s.failure.run.backend, *c.graph);
  const std::optional<InjectSection> injected =
      plan ? std::optional<InjectSection>(inject_section_parts(*plan)) : std::nullopt;

  const InputCode inputs = input_code(c, s);
  SectionForm form;
  form.module = modules.eager || modules.ir_form_reason.empty();
  form.eager = modules.eager.has_value();
  form.random = random_number_flags(*c.graph);
  form.device = values["DEVICE"];
  std::string input_helper = inputs.helper;
  if (inputs.saved) flags.insert(flag::os);
  if (form.module) {
    flags.insert(flag::module);
    add_module_form(modules, inputs, plan ? &*plan : nullptr, reproducer_input_values(c, s), values);
    if (inputs.saved) input_helper += "\n\n\nSAVED = saved_inputs()  # the values of the graph's inputs, in order";
  } else {
    flags.insert(flag::ir_form_reason);
    values["IR_FORM_REASON"] = python_comment_text(modules.ir_form_reason);
    values["CLASSES"] = values["TYPING_IMPORT"] = "";
    values["GRAPH_IR"] = ir_literal_lines(reproducer_graph_ir(c, s));
    if (injected && injected->runs_injected_graph) {
      flags.insert(flag::injected);
      values["INJECTED_IR"] = ir_literal_lines(graph_to_ir(*plan->graph));
      values["FIRST_OP"] = python_comment_text(plan->op_text.substr(0, plan->op_text.find('+')));
      values["FAULT_EDIT"] = python_comment_text(inject_edit_text(plan->fault));
    }
    values["INPUTS"] = inputs.saved ? "saved_inputs()" : python_list_lines(inputs.values);
    if (c.graph->outputs().size() != 1)
      flags.insert(flags.count(flag::injected) ? flag::packed_injected : flag::packed);
    if (flags.count(flag::packed_injected)) flags.insert(flag::packed);
    form.empty_inputs = has_empty_container_input(reproducer_input_values(c, s));
  }
  if (form.eager) add_pytorch2_environment(values, flags);
  // Defined right before the code that calls it, with PEP 8's blank lines around it.
  values["INPUT_HELPER"] = input_helper.empty() ? "" : "\n\n" + input_helper + "\n";

  // Sections: the reference, the backend, the comparison.
  std::string sections;
  if (const std::optional<std::string>& case_module = form.eager ? std::nullopt : modules.case_module) {
    flags.insert(flag::case_module);
    const bool inline_module = case_module->size() <= kInlineModuleBytes;
    flags.insert(inline_module ? flag::case_module_inline : flag::case_module_file);
    if (inline_module) values["CASE_MODULE_BYTES"] = python_bytes_lines(*case_module, "    ");
    if (!inline_module) flags.insert(flag::os);
  }
  // The sides first: they say which helper they call (calls_profiled), defined before them.
  const RenderedSection reference =
      backend_section(c, s.failure.run.ref, {}, "reference", std::nullopt, form, values, flags);
  const RenderedSection backend =
      backend_section(c, s.failure.run.backend, s.failure.run.backend_options, "backend", plan, form, values, flags);
  values["BACKEND_HEADS"] = backend_heads(reference, backend, 2);
  if (form.empty_inputs) append_section(sections, std::string(templates::repro_py_interpretable), 2);
  if (reference.calls_profiled || backend.calls_profiled) {
    TemplateFlags profiled_flags = form.flags();
    const std::vector<std::string> constants = used_constant_inputs(c);
    if (!form.module && !constants.empty()) {
      profiled_flags.insert(flag::constants);
      append_section(
          sections,
          fill_template(templates::repro_py_constants, {{"CONSTANT_INPUTS", "[" + joined(constants, ", ") + "]"}}), 2);
    }
    append_section(sections, fill_template(templates::repro_py_profiled, {{"DEVICE", form.device}}, profiled_flags), 2);
  }
  append_section(sections, reference.text, 2);
  append_section(sections, backend.text, 2);
  // Only an accuracy failure needs the comparison: for the others the exit status does not depend on it.
  if (s.failure.status == Status::Accuracy) {
    flags.insert(flag::accuracy);
    flags.insert(s.failure.run.compare.use_fp64 ? flag::fp64 : flag::no_fp64);
    if (s.failure.run.compare.use_fp64) flags.insert(form.module ? flag::fp64_module : flag::fp64_graph);
    const CompareOptions& cmp = s.failure.run.compare;
    TemplateFlags options;  // the rules of the options tsrepro run was given (--cos, --ignore-non-fp)
    if (cmp.cos_similarity) options.insert(flag::cos);
    if (cmp.ignore_non_fp) options.insert(flag::ignore_non_fp);
    if (cmp.exact_dtype) options.insert(flag::exact);
    append_section(
        sections,
        fill_template(templates::repro_py_same,
                      {{"TOL", python_float_literal(cmp.tol)}, {"EQUAL_NAN", python_bool_literal(cmp.equal_nan)}},
                      options),
        2);
  }
  if (s.failure.run.backward)
    append_section(sections,
                   fill_template(templates::repro_py_backward,
                                 {{"GRADIENT_INPUTS", "[" + joined(gradient_input_indices(c), ", ") + "]"}}),
                   2);
  if (sections.find("os.") != std::string::npos || flags.count(flag::repeat)) flags.insert(flag::os);
  values["SECTIONS"] = sections.substr(0, sections.find_last_not_of('\n') + 1);

  // Imports the data needs.
  const std::string data = values["INPUTS"] + values["CLASSES"];
  if (data.find("math.") != std::string::npos) flags.insert(flag::math);
  if (data.find("base64.") != std::string::npos) flags.insert(flag::base64);
  return at_most_two_blank_lines(fill_template(templates::repro_py_repro, values, flags));
}

}  // namespace tsrepro
