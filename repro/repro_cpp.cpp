// repro.cpp + CMakeLists.txt + tsrepro_compare.h: a short libtorch program that runs a case's graph
// in the reference and with the tested backend, and for an accuracy failure compares them with
// tsrepro's own comparison.
//
// The program is repro/templates/repro_cpp/repro.cpp.in with its placeholders filled and one
// section per backend family, as repro.py is made. Its inputs are the exact values the runner
// uses (the case's, or the runner's own fake ones), pickled into the source when they are small.
// The comparison is not a second version: tsrepro_compare.h is include/tsrepro/compare.h and
// runner/exec/compare.cpp themselves, embedded by the build. Everything that comes from the case goes
// through repro/cpp_literal.h: nothing in a graph or a command line can become code.

#include <set>
#include <string>
#include <vector>

#include <torch/csrc/jit/serialization/pickle.h>

#include "repro/backend_section.h"
#include "repro/cpp_literal.h"
#include "repro/describe.h"
#include "repro/reproducer_case.h"
#include "repro/reproducer_parts.h"
#include "repro/template_fill.h"
#include "repro/templates_repro_cpp.h"  // generated from repro/templates/repro_cpp/, runner/exec/compare.cpp, runner/graph/nested_nodes.h and strict_fusion.*
#include "runner/case/extension_libraries.h"
#include "runner/case/inputs.h"
#include "runner/graph/strict_fusion.h"
#include "tsrepro/backend.h"
#include "tsrepro/error.h"
#include "tsrepro/writer.h"

namespace tsrepro {
// The parts' names are repro.cpp's own (repro_py.cpp has parts of the same names in the same unity
// build).
namespace cpp_parts {
namespace {

std::string pickled(const std::vector<c10::IValue>& values) {
  const std::vector<char> bytes = torch::jit::pickle_save(c10::ivalue::Tuple::create(values));
  return std::string(bytes.begin(), bytes.end());
}

// How the model is held, which the sections' lines depend on: Repro's forward as source, or IR
// text with one output or several (`packed`), its archive inline or in a file where a side
// freezes it.
struct ModelForm {
  bool module = false;
  TemplateFlags flags;
};

ModelForm model_form_of(const Case& c, const ReproModules& modules) {
  ModelForm form;
  form.module = modules.ir_form_reason.empty();
  form.flags = random_number_flags(*c.graph);
  form.flags.insert(form.module ? flag::module : c.graph->outputs().size() != 1 ? flag::packed : flag::single);
  if (const std::optional<std::string>& case_module = form.module ? std::nullopt : modules.case_module)
    form.flags.insert(case_module->size() <= kInlineModuleBytes ? flag::case_module_inline : flag::case_module_file);
  return form;
}

// The header: what the failure is and where it was seen, --backward, the libraries to load.
ReproducerPart header_part(const Case& c, const ReproSettings& s) {
  ReproducerPart part;
  add_common_values(c, s, cpp_comment_text, cpp_string_literal, part.values, part.flags);
  if (s.failure.run.backward) part.flags.insert(flag::backward);
  std::string libraries;
  for (const ExtensionLibrary& library : libraries_of_case(c))
    libraries += (libraries.empty() ? "" : ", ") + cpp_string_literal(library.path);
  part.values["LIBRARIES"] = libraries;
  if (!libraries.empty()) part.flags.insert(flag::libraries);
  return part;
}

// The model: Repro's forward as source (repro/module_source.h), or IR text where it cannot be; the
// one the backend edits beside it; the module archive where a side freezes it.
ReproducerPart model_part(const Case& c, const ReproSettings& s, const ReproModules& modules, const ModelForm& form) {
  ReproducerPart part;
  if (form.module) {
    part.flags.insert(flag::module);
    part.values["FORWARD"] = cpp_string_lines(modules.repro.printed_forward, "    ");
  } else {
    part.flags.insert(flag::ir_form_reason);
    part.values["IR_FORM_REASON"] = cpp_comment_text(modules.ir_form_reason);
    part.values["GRAPH_IR"] = cpp_string_lines(reproducer_graph_ir(c, s), "    ");
  }
  if (modules.edited) {
    part.flags.insert(flag::edited);
    part.values["EDITED_NAME"] = form.module ? kCppDialect.edited_model : kCppDialect.edited_graph;
    part.values["EDITED_OF"] = form.module ? kCppDialect.model : kCppDialect.graph;
    part.values["EDITED_TEXT"] = cpp_string_lines(
        form.module ? modules.edited_module->printed_forward : graph_to_ir(*modules.edited->graph), "    ");
    part.values["EDIT"] = cpp_comment_text(modules.edited->edit);
  }
  if (form.flags.count(flag::case_module_inline)) {
    part.flags.insert(flag::case_module_inline);
    part.values["CASE_MODULE_BYTES"] = cpp_string_lines(*modules.case_module, "    ");
  }
  if (form.flags.count(flag::case_module_file)) part.flags.insert({flag::case_module_file, flag::files});
  if (has_strict_fusion_blocks(*c.graph)) {  // tsrepro_strict_fusion.h; the IR form makes the objects itself
    part.flags.insert(flag::strict_fusion);
    if (!form.module) part.flags.insert(flag::strict_fusion_ir);
  }
  return part;
}

// The inputs: pickled into the source when they are small, else read from inputs.pt beside it.
ReproducerPart inputs_part(const Case& c, const ReproSettings& s) {
  ReproducerPart part;
  const std::vector<c10::IValue> inputs = reproducer_input_values(c, s);
  if (!uses_fake_inputs(c, s) && tensor_data_bytes(inputs) > kInlineInputBytes) {
    part.flags.insert({flag::saved_inputs, flag::files});
  } else {
    part.flags.insert(flag::inline_inputs);
    part.values["INPUT_BYTES"] = cpp_string_lines(pickled(inputs), "    ");
  }
  return part;
}

// Repro's attributes and the runs of its forward the sides call (module.cpp.in).
std::string module_helpers(const Case& c, const ReproModules& modules, TemplateFlags uses, TemplateFlags& program) {
  std::vector<std::string> attributes, forward_inputs;
  for (const ModuleAttribute& attribute : modules.repro.attributes) {
    const std::string value = "values[" + std::to_string(attribute.input) + "]";
    const std::string name = cpp_string_literal(attribute.name);
    if (attribute.value.isTensor())
      attributes.push_back("  module.register_buffer(" + name + ", " + value + ".toTensor());");
    else if (attribute.training_flag)
      attributes.push_back("  module.register_attribute(" + name + ", c10::BoolType::get(), !eval && " + value +
                           ".toBool());");
    else
      attributes.push_back("  module.register_attribute(" + name + ", " + value + ".type(), " + value + ");");
  }
  for (size_t i : modules.repro.forward_inputs) forward_inputs.push_back("values[" + std::to_string(i) + "]");
  if (uses.count(flag::profiled) && random_number_flags(*c.graph).count(flag::random))
    uses.insert(flag::profiled_random);
  if (has_strict_fusion_blocks(*c.graph)) uses.insert(flag::strict_fusion);
  if (modules.repro.needs_resolver || (modules.edited_module && modules.edited_module->needs_resolver)) {
    uses.insert(flag::resolver);
    program.insert(flag::resolver);
  }
  return fill_template(templates::repro_cpp_module,
                       {{"ATTRIBUTES", joined(attributes, "\n")}, {"FORWARD_INPUTS", joined(forward_inputs, ", ")}},
                       uses);
}

// The section of backend `spec` (backends/<id>/repro.cpp.in) as the function `role`.
RenderedSection side_section(const Case& c, const std::string& spec, const BackendOptions& options,
                             const std::string& role, const ModelForm& form, TemplateFlags& program_flags) {
  const SectionRequest request{c,
                               kCppDialect,
                               spec,
                               options,
                               form.module,
                               /*eager_module=*/false,
                               /*empty_inputs=*/false};
  return render_backend_section(request, {{"ROLE", role}}, form.flags, program_flags);
}

// The two sides and the helpers they call, defined before them. With --backward they are wrapped
// (backward.cpp.in): their own functions get other names.
ReproducerPart sides_part(const Case& c, const ReproSettings& s, const ReproModules& modules, const ModelForm& form) {
  ReproducerPart part;
  const std::string suffix = s.failure.run.backward ? "_forward" : "";
  const RenderedSection reference = side_section(c, s.failure.run.ref, {}, "reference" + suffix, form, part.flags);
  const RenderedSection backend =
      side_section(c, s.failure.run.backend, s.failure.run.backend_options, "backend" + suffix, form, part.flags);
  part.values["BACKEND_HEADS"] = backend_heads(reference, backend, 1);
  const bool profiled = reference.calls_profiled || backend.calls_profiled;
  if (form.module) {
    TemplateFlags uses;
    if (reference.calls_interpreted || backend.calls_interpreted) uses.insert(flag::interpreted);
    if (profiled) uses.insert(flag::profiled);
    part.sections.push_back(module_helpers(c, modules, uses, part.flags));
  } else if (profiled) {
    part.flags.insert(flag::profiled);
    TemplateFlags profiled_flags = random_number_flags(*c.graph);
    if (c.graph->outputs().size() != 1) profiled_flags.insert(flag::packed);
    if (const std::vector<std::string> constants = used_constant_inputs(c); !constants.empty()) {
      profiled_flags.insert(flag::constants);
      part.sections.push_back(
          fill_template(templates::repro_cpp_constants, {{"CONSTANT_INPUTS", joined(constants, ", ")}}));
    }
    part.sections.push_back(fill_template(templates::repro_cpp_profiled, {}, profiled_flags));
  }
  part.sections.push_back(reference.text);
  part.sections.push_back(backend.text);
  return part;
}

// --backward's gradients, and the comparison an accuracy failure needs (tsrepro_compare.h).
ReproducerPart comparison_part(const Case& c, const ReproSettings& s) {
  ReproducerPart part;
  if (s.failure.run.backward)
    part.sections.push_back(
        fill_template(templates::repro_cpp_backward, {{"GRADIENT_INPUTS", joined(gradient_input_indices(c), ", ")}}));
  if (s.failure.status == Status::Accuracy || s.failure.run.backward) part.flags.insert(flag::compare_header);
  if (s.failure.status == Status::Accuracy) {
    part.flags.insert(flag::accuracy);
    const CompareOptions& cmp = s.failure.run.compare;
    part.sections.push_back(
        fill_template(templates::repro_cpp_compare, {{"TOL", cpp_double_literal(cmp.tol)},
                                                     {"COS", cpp_bool_literal(cmp.cos_similarity)},
                                                     {"EQUAL_NAN", cpp_bool_literal(cmp.equal_nan)},
                                                     {"USE_FP64", cpp_bool_literal(cmp.use_fp64)},
                                                     {"EXACT", cpp_bool_literal(cmp.exact_dtype)},
                                                     {"IGNORE_NON_FP", cpp_bool_literal(cmp.ignore_non_fp)}}));
  }
  return part;
}

}  // namespace
}  // namespace cpp_parts

std::string repro_cpp_source(const Case& c, const ReproSettings& s) {
  return repro_cpp_source(c, s, repro_modules(c, s));
}

std::string repro_cpp_source(const Case& c, const ReproSettings& s, const ReproModules& modules) {
  namespace parts = cpp_parts;
  const parts::ModelForm form = parts::model_form_of(c, modules);
  return lay_out(templates::repro_cpp_repro,
                 {parts::header_part(c, s), parts::model_part(c, s, modules, form), parts::inputs_part(c, s),
                  parts::sides_part(c, s, modules, form), parts::comparison_part(c, s)},
                 /*blank_lines=*/1);
}

std::string repro_cmake_source() { return templates::repro_cpp_cmake_lists; }

namespace {

// tsrepro's own files (path, text), in order, as one header for the one translation unit of
// repro.cpp: each one's include of another of them is dropped, nothing else changes.
std::string one_header(const std::string& about, const std::vector<std::pair<std::string, std::string>>& files) {
  std::string joined = about;
  for (size_t i = 0; i < files.size(); ++i) {
    std::string kept = files[i].second;
    for (const auto& [other, unused] : files) {
      const std::string include_line = "#include \"" + other + "\"\n";
      if (const auto at = kept.find(include_line); at != std::string::npos) kept.erase(at, include_line.size());
    }
    joined += (i == 0 ? "" : "\n") + kept;
  }
  return joined;
}

}  // namespace

std::string repro_cpp_compare_header() {
  return one_header(
      "// Generated by tsrepro from its include/tsrepro/compare.h and runner/exec/compare.cpp: the\n"
      "// comparison tsrepro itself runs (and --backward's loss). Do not edit; regenerate with tsrepro.\n",
      {{"tsrepro/compare.h", templates::repro_cpp_source_compare_h},
       {"runner/exec/compare.cpp", templates::repro_cpp_source_compare_cpp}});
}

std::string repro_cpp_strict_fusion_header() {
  return one_header(
      "// Generated by tsrepro from its runner/graph/nested_nodes.h and strict_fusion.{h,cpp}: the object\n"
      "// of a graph's torch.jit.strict_fusion block, as tsrepro itself makes it. Do not edit; regenerate\n"
      "// with tsrepro.\n",
      {{"runner/graph/nested_nodes.h", templates::repro_cpp_source_nested_nodes_h},
       {"runner/graph/strict_fusion.h", templates::repro_cpp_source_strict_fusion_h},
       {"runner/graph/strict_fusion.cpp", templates::repro_cpp_source_strict_fusion_cpp}});
}

}  // namespace tsrepro
