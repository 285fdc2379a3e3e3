// repro.py: a short, single-file Python reproducer of a case, for stock PyTorch (1.13 and 2.x).
//
// The script is repro/templates/repro_py/repro.py with its placeholders filled: the header, the
// graph, the inputs (written into the file exactly when they are small, else read from inputs.pt
// or drawn by a seeded generator), the reference and the tested backend as the few public calls
// that set them up (each backend's section, backends/<id>/repro.py), and a same()-style comparison. What it
// leaves out (verdict classes, signature matching, a child process) is `tsrepro run`'s job.
// Everything taken from the case goes through repro/python_literal.h or python_value_literal.h:
// nothing in a case can become code in the script.

#include <algorithm>
#include <cmath>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "repro/backend_section.h"
#include "repro/describe.h"
#include "repro/environment.h"
#include "runner/formats/python_literal.h"
#include "repro/python_value_literal.h"
#include "repro/reproducer_case.h"
#include "repro/reproducer_parts.h"
#include "runner/graph/strict_fusion.h"
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

// class Repro (or Edited, Repro as the backend edits it): __init__ registers the lifted inputs,
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
  return fill_template(
      templates::repro_py_module_class,
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

// ---- The parts ----------------------------------------------------------------------------------

// How the model is held, which every part's lines depend on: the Repro class (TorchScript's, or
// eager PyTorch on PyTorch 2's module route) or IR text, and for IR text whether an input is an
// empty list or dict.
struct ModelForm {
  bool module = false;
  bool eager = false;
  bool empty_inputs = false;
  TemplateFlags random;  // random_number_flags of the graph
  std::string device;    // the DEVICE literal the model moves to

  TemplateFlags flags() const {
    TemplateFlags flags = random;
    flags.insert(module ? flag::module : empty_inputs ? flag::empty_inputs : flag::graph_inputs);
    if (module) flags.insert(eager ? flag::eager_module : flag::scripted);
    return flags;
  }
  // A section's parameters: the reference of the module form gets fp64 too (Repro's own floats).
  std::string parameters() const { return module ? "inputs, fp64=False" : "inputs"; }
};

// Whether an input is an empty list or dict, whose type torch._C._jit_interpret_graph cannot
// infer from the value: the interpreted sections then build it in the graph (interpretable.py).
bool has_empty_container_input(const std::vector<c10::IValue>& inputs) {
  return std::any_of(inputs.begin(), inputs.end(), [](const c10::IValue& v) {
    return (v.isList() && v.toListRef().empty()) || (v.isGenericDict() && v.toGenericDict().empty());
  });
}

ModelForm model_form_of(const Case& c, const ReproSettings& s, const ReproModules& modules) {
  ModelForm form;
  form.module = modules.eager || modules.ir_form_reason.empty();
  form.eager = modules.eager.has_value();
  form.empty_inputs = !form.module && has_empty_container_input(reproducer_input_values(c, s));
  form.random = random_number_flags(*c.graph);
  form.device = python_string_literal(s.failure.run.device);
  return form;
}

// Python code that writes math.inf or math.nan (python_float_literal's spelling of them) needs
// `import math`: the parts that write values say so of their own code.
void import_math_for(const std::string& code, TemplateFlags& flags) {
  if (code.find("math.") != std::string::npos) flags.insert(flag::math);
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
void add_pytorch2_environment(ReproducerPart& part) {
  const nlohmann::json& env = pytorch2_environment();
  if (!env.is_object()) return;
  auto fact = [&](const char* key, const char* unknown) {
    return python_comment_text(env.contains(key) && env[key].is_string() ? env[key].get<std::string>() : unknown);
  };
  part.flags.insert(flag::pt2_versions);
  part.values["TORCH_VERSION"] = fact("torch", "unknown");
  part.values["PYTHON_VERSION"] = fact("python", "unknown");
  part.values["CXX_COMPILER"] = fact("compiler", "C++ compiler unknown");
  std::vector<std::string> lines;
  for (const nlohmann::json& line : env.value("inductor_config", nlohmann::json::array()))
    if (line.is_string())
      lines.push_back(plain_config_line(line.get<std::string>()) ? line.get<std::string>()
                                                                 : "# " + python_comment_text(line.get<std::string>()));
  if (lines.empty()) return;
  part.flags.insert(flag::compiler_config);
  part.values["COMPILER_CONFIG"] = joined(lines, "\n");
}

// The header: what the failure is and where it was seen, the custom-operator libraries to load,
// the PyTorch 2 environment.
ReproducerPart header_part(const Case& c, const ReproSettings& s, const ModelForm& form) {
  ReproducerPart part;
  add_common_values(c, s, python_comment_text, python_string_literal, part.values, part.flags);
  if (s.failure.run.repeat > 1) part.flags.insert(flag::os);  // the repeated runs' TSREPRO_REPRO_RUN
  std::vector<std::string> libraries, packages;
  for (const ExtensionLibrary& library : libraries_of_case(c)) {
    libraries.push_back(python_string_literal(library.path));
    if (const std::string package = python_package_of(library.path); !package.empty())
      packages.push_back(python_string_literal(package));
  }
  part.values["LIBRARIES"] = "[" + joined(libraries, ", ") + "]";
  part.values["LIBRARY_PACKAGES"] = "[" + joined(packages, ", ") + "]";
  if (!libraries.empty()) part.flags.insert({flag::libraries, flag::os});
  if (!packages.empty()) part.flags.insert(flag::library_packages);
  if (form.eager) add_pytorch2_environment(part);
  return part;
}

// The model in the module form: the classes (Repro, and Edited where the backend runs the graph
// edited) and the imports their annotations need.
void add_module_classes(const ReproModules& modules, const InputCode& inputs, const std::vector<c10::IValue>& values,
                        ReproducerPart& part) {
  std::string classes;
  std::set<std::string> imports;
  if (const std::optional<EagerModule>& eager = modules.eager) {
    classes = eager_module_class(*eager, inputs, values);
    for (const std::string& name : eager->imports)  // math comes with the data's imports (its #[math] line)
      if (name != "math") imports.insert("import " + name);
  } else {
    classes = module_class(modules.repro, inputs, "Repro", "torch.nn.Module",
                           "the minified graph: its state as attributes, its forward as code", true);
    imports.insert(modules.repro.python_imports.begin(), modules.repro.python_imports.end());
    if (modules.edited_module) {
      classes +=
          "\n\n\n" + module_class(*modules.edited_module, inputs, "Edited", "Repro",
                                  "Repro as the backend edits it, " + python_comment_text(modules.edited->edit), false);
      imports.insert(modules.edited_module->python_imports.begin(), modules.edited_module->python_imports.end());
    }
  }
  part.values["CLASSES"] = "\n\n" + classes + "\n\n";
  part.values["TYPING_IMPORT"] = joined(std::vector<std::string>(imports.begin(), imports.end()), "\n");
  import_math_for(classes, part.flags);
}

// A copy of `graph` returning its outputs as one tuple: what makeMultiOutputIntoTuple() makes of
// GRAPH in repro.py, done here for the graph a backend edits, which then needs no line of its own.
std::shared_ptr<torch::jit::Graph> outputs_as_one_tuple(torch::jit::Graph& graph) {
  std::shared_ptr<torch::jit::Graph> packed = graph.copy();
  torch::jit::Node* tuple = packed->createTuple(packed->outputs());
  packed->appendNode(tuple);
  while (!packed->outputs().empty()) packed->eraseOutput(0);
  packed->registerOutput(tuple->output());
  return packed;
}

// The model in the IR form: the graph (and the one the backend edits) as IR text, and the module
// archive where a side freezes it.
void add_graph_ir(const Case& c, const ReproSettings& s, const ReproModules& modules, ReproducerPart& part) {
  part.flags.insert(flag::ir_form_reason);
  part.values["IR_FORM_REASON"] = python_comment_text(modules.ir_form_reason);
  part.values["CLASSES"] = part.values["TYPING_IMPORT"] = "";
  part.values["GRAPH_IR"] = ir_literal_lines(reproducer_graph_ir(c, s));
  const bool packed = c.graph->outputs().size() != 1;
  if (packed) part.flags.insert(flag::packed);
  if (has_strict_fusion_blocks(*c.graph)) part.flags.insert(flag::strict_fusion_ir);  // strict_fusion_objects
  if (modules.edited) {
    part.flags.insert(flag::edited);
    part.values["EDITED_IR"] =
        ir_literal_lines(graph_to_ir(*(packed ? outputs_as_one_tuple(*modules.edited->graph) : modules.edited->graph)));
    part.values["EDIT"] =
        python_comment_text(modules.edited->edit) + (packed ? " (its outputs one tuple, as GRAPH's)" : "");
  }
  if (const std::optional<std::string>& case_module = modules.case_module) {
    part.flags.insert(flag::case_module);
    const bool inline_module = case_module->size() <= kInlineModuleBytes;
    part.flags.insert(inline_module ? flag::case_module_inline : flag::case_module_file);
    if (inline_module) part.values["CASE_MODULE_BYTES"] = python_bytes_lines(*case_module, "    ");
    if (!inline_module) part.flags.insert(flag::os);
  }
}

ReproducerPart model_part(const Case& c, const ReproSettings& s, const ReproModules& modules, const ModelForm& form,
                          const InputCode& inputs) {
  ReproducerPart part;
  if (form.module) {
    part.flags.insert(flag::module);
    add_module_classes(modules, inputs, reproducer_input_values(c, s), part);
  } else {
    add_graph_ir(c, s, modules, part);
  }
  return part;
}

// The inputs: the values forward takes (the module form) or the graph's (the IR form), and the
// helper they call, defined right before them.
ReproducerPart inputs_part(const ReproModules& modules, const ModelForm& form, const InputCode& inputs) {
  ReproducerPart part;
  std::string helper = inputs.helper;
  if (inputs.saved) part.flags.insert(flag::os);
  if (form.module) {
    std::vector<std::string> forward_values;
    for (size_t i : modules.eager ? modules.eager->forward_inputs : modules.repro.forward_inputs)
      forward_values.push_back(inputs.values.at(i));
    part.values["INPUTS"] = python_list_lines(forward_values);
    if (inputs.saved) helper += "\n\n\nSAVED = saved_inputs()  # the values of the graph's inputs, in order";
  } else {
    part.values["INPUTS"] = inputs.saved ? "saved_inputs()" : python_list_lines(inputs.values);
  }
  import_math_for(part.values["INPUTS"], part.flags);
  // With PEP 8's blank lines around it.
  part.values["INPUT_HELPER"] = helper.empty() ? "" : "\n\n" + helper + "\n";
  return part;
}

// The section of backend `spec` (backends/<id>/repro.py) as the function `role`.
RenderedSection side_section(const Case& c, const std::string& spec, const BackendOptions& options,
                             const std::string& role, const ModelForm& form, TemplateFlags& program_flags) {
  const SectionRequest request{c, kPythonDialect, spec, options, form.module, form.eager, form.empty_inputs};
  return render_backend_section(request, {{"ROLE", role}, {"PARAMETERS", form.parameters()}, {"DEVICE", form.device}},
                                form.flags(), program_flags);
}

// The two sides, `reference` and `backend`, and the helpers they call, defined before them.
ReproducerPart sides_part(const Case& c, const ReproSettings& s, const ModelForm& form) {
  ReproducerPart part;
  const RenderedSection reference = side_section(c, s.failure.run.ref, {}, "reference", form, part.flags);
  const RenderedSection backend =
      side_section(c, s.failure.run.backend, s.failure.run.backend_options, "backend", form, part.flags);
  part.values["BACKEND_HEADS"] = backend_heads(reference, backend, 2);
  if (form.empty_inputs) part.sections.push_back(templates::repro_py_interpretable);
  if (reference.calls_profiled || backend.calls_profiled) {
    TemplateFlags profiled_flags = form.flags();
    const std::vector<std::string> constants = used_constant_inputs(c);
    if (!form.module && !constants.empty()) {
      profiled_flags.insert(flag::constants);
      part.sections.push_back(
          fill_template(templates::repro_py_constants, {{"CONSTANT_INPUTS", "[" + joined(constants, ", ") + "]"}}));
    }
    part.sections.push_back(fill_template(templates::repro_py_profiled, {{"DEVICE", form.device}}, profiled_flags));
  }
  part.sections.push_back(reference.text);
  part.sections.push_back(backend.text);
  return part;
}

// How the outputs are judged: only an accuracy failure needs the comparison (for the others the
// exit status does not depend on it); --backward's gradients.
ReproducerPart comparison_part(const Case& c, const ReproSettings& s, const ModelForm& form) {
  ReproducerPart part;
  if (s.failure.status == Status::Accuracy) {
    const CompareOptions& cmp = s.failure.run.compare;
    part.flags.insert(flag::accuracy);
    part.flags.insert(cmp.use_fp64 ? flag::fp64 : flag::no_fp64);
    if (cmp.use_fp64) part.flags.insert(form.module ? flag::fp64_module : flag::fp64_graph);
    TemplateFlags rules;  // the rules of the options tsrepro run was given (--cos, --ignore-non-fp)
    if (cmp.cos_similarity) rules.insert(flag::cos);
    if (cmp.ignore_non_fp) rules.insert(flag::ignore_non_fp);
    if (cmp.exact_dtype) rules.insert(flag::exact);
    part.sections.push_back(fill_template(
        templates::repro_py_same,
        {{"TOL", python_float_literal(cmp.tol)}, {"EQUAL_NAN", python_bool_literal(cmp.equal_nan)}}, rules));
  }
  if (s.failure.run.backward)
    part.sections.push_back(fill_template(templates::repro_py_backward,
                                          {{"GRADIENT_INPUTS", "[" + joined(gradient_input_indices(c), ", ") + "]"}}));
  return part;
}

}  // namespace

std::string repro_py_source(const Case& c, const ReproSettings& s) {
  return repro_py_source(c, s, repro_modules(c, s));
}

std::string repro_py_source(const Case& c, const ReproSettings& s, const ReproModules& modules) {
  const ModelForm form = model_form_of(c, s, modules);
  const InputCode inputs = input_code(c, s);
  return at_most_two_blank_lines(
      lay_out(templates::repro_py_repro,
              {header_part(c, s, form), model_part(c, s, modules, form, inputs), inputs_part(modules, form, inputs),
               sides_part(c, s, form), comparison_part(c, s, form)},
              2));
}

}  // namespace tsrepro
