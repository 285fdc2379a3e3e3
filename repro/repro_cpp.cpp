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

#include "backends/inject/inject.h"
#include "backends/inject/section.h"
#include "repro/backend_section.h"
#include "repro/cpp_literal.h"
#include "repro/describe.h"
#include "repro/reproducer_case.h"
#include "repro/template_fill.h"
#include "repro/templates_repro_cpp.h"  // generated from repro/templates/repro_cpp/ and runner/exec/compare.cpp
#include "runner/case/extension_libraries.h"
#include "runner/case/inputs.h"
#include "tsrepro/backend.h"
#include "tsrepro/error.h"
#include "tsrepro/writer.h"

namespace tsrepro {
namespace {

std::string pickled(const std::vector<c10::IValue>& values) {
  const std::vector<char> bytes = torch::jit::pickle_save(c10::ivalue::Tuple::create(values));
  return std::string(bytes.begin(), bytes.end());
}

// The section of backend `spec` (backends/<id>/repro.cpp.in) as the function `role`. The form
// flags say how the model is held: the module form, or IR text with one output or several
// (`packed`), and its archive inline or in a file where a backend freezes it.
RenderedSection backend_section(const Case& c, const std::string& spec, const BackendOptions& options,
                                const std::string& role, const std::optional<InjectPlan>& plan,
                                const TemplateValues& values, TemplateFlags& flags) {
  TemplateFlags form = random_number_flags(*c.graph);
  const bool module = flags.count(flag::module) > 0;
  form.insert(module ? flag::module : c.graph->outputs().size() != 1 ? flag::packed : flag::single);
  for (TemplateFlag storage : {flag::case_module_inline, flag::case_module_file})
    if (flags.count(storage)) form.insert(storage);
  const SectionRequest request{c,      kCppDialect, spec, options, plan ? &*plan : nullptr,
                               module, /*eager_module=*/false, /*empty_inputs=*/false};
  return render_backend_section(request, {{"ROLE", role}}, form, values, flags);
}

}  // namespace

std::string repro_cpp_source(const Case& c, const ReproSettings& s) {
  return repro_cpp_source(c, s, repro_modules(c, s));
}

std::string repro_cpp_source(const Case& c, const ReproSettings& s, const ReproModules& modules) {
  TemplateFlags flags;
  TemplateValues values;
  add_common_values(c, s, cpp_comment_text, cpp_string_literal, values, flags);
  if (s.failure.run.backward) flags.insert(flag::backward);

  std::string libraries;
  for (const ExtensionLibrary& library : libraries_of_case(c))
    libraries += (libraries.empty() ? "" : ", ") + cpp_string_literal(library.path);
  values["LIBRARIES"] = libraries;
  if (!libraries.empty()) flags.insert(flag::libraries);
  std::optional<InjectPlan> plan;
  if (is_inject_spec(s.failure.run.backend)) plan = plan_inject(s.failure.run.backend, *c.graph);
  const std::optional<InjectSection> injected =
      plan ? std::optional<InjectSection>(inject_section_parts(*plan)) : std::nullopt;
  // The model: Repro's forward as source (repro/module_source.h), or IR text where it cannot be.
  const bool module = modules.ir_form_reason.empty();
  if (module) {
    flags.insert(flag::module);
    values["FORWARD"] = cpp_string_lines(modules.repro.printed_forward, "    ");
  } else {
    flags.insert(flag::ir_form_reason);
    values["IR_FORM_REASON"] = cpp_comment_text(modules.ir_form_reason);
    values["GRAPH_IR"] = cpp_string_lines(reproducer_graph_ir(c, s), "    ");
  }
  if (injected && injected->runs_injected_graph) {
    flags.insert(module ? flag::injected_module : flag::injected);
    if (module) values["INJECTED_FORWARD"] = cpp_string_lines(modules.injected->printed_forward, "    ");
    if (!module) values["INJECTED_IR"] = cpp_string_lines(graph_to_ir(*plan->graph), "    ");
    values["FIRST_OP"] = cpp_comment_text(plan->op_text.substr(0, plan->op_text.find('+')));
    values["FAULT_EDIT"] = cpp_comment_text(inject_edit_text(plan->fault));
  }
  const std::vector<c10::IValue> inputs = reproducer_input_values(c, s);
  if (const std::optional<std::string>& case_module = modules.case_module) {
    const bool inline_module = case_module->size() <= kInlineModuleBytes;
    flags.insert(inline_module ? flag::case_module_inline : flag::case_module_file);
    if (inline_module) values["CASE_MODULE_BYTES"] = cpp_string_lines(*case_module, "    ");
    if (!inline_module) flags.insert(flag::files);
  }
  if (!uses_fake_inputs(c, s) && tensor_data_bytes(inputs) > kInlineInputBytes) {
    flags.insert(flag::saved_inputs);
    flags.insert(flag::files);
  } else {
    flags.insert(flag::inline_inputs);
    values["INPUT_BYTES"] = cpp_string_lines(pickled(inputs), "    ");
  }

  // The sides first: they say which helpers they call.
  // With --backward they are wrapped (backward.cpp.in): their own functions get other names.
  const std::string suffix = s.failure.run.backward ? "_forward" : "";
  const RenderedSection reference =
      backend_section(c, s.failure.run.ref, {}, "reference" + suffix, std::nullopt, values, flags);
  const RenderedSection backend =
      backend_section(c, s.failure.run.backend, s.failure.run.backend_options, "backend" + suffix, plan, values, flags);
  values["BACKEND_HEADS"] = backend_heads(reference, backend, 1);

  std::string sections;
  if (module) {  // Repro's attributes and the runs of its forward the sections call
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
    TemplateFlags uses;
    if (reference.calls_interpreted || backend.calls_interpreted) uses.insert(flag::interpreted);
    if (reference.calls_profiled || backend.calls_profiled) uses.insert(flag::profiled);
    if (uses.count(flag::profiled) && random_number_flags(*c.graph).count(flag::random))
      uses.insert(flag::profiled_random);
    if (modules.repro.needs_resolver || (modules.injected && modules.injected->needs_resolver)) {
      uses.insert(flag::resolver);
      flags.insert(flag::resolver);
    }
    append_section(
        sections,
        fill_template(templates::repro_cpp_module,
                      {{"ATTRIBUTES", joined(attributes, "\n")}, {"FORWARD_INPUTS", joined(forward_inputs, ", ")}},
                      uses),
        1);
  } else if (reference.calls_profiled || backend.calls_profiled) {
    flags.insert(flag::profiled);
    TemplateFlags profiled_flags = random_number_flags(*c.graph);
    if (c.graph->outputs().size() != 1) profiled_flags.insert(flag::packed);
    if (const std::vector<std::string> constants = used_constant_inputs(c); !constants.empty()) {
      profiled_flags.insert(flag::constants);
      append_section(sections,
                     fill_template(templates::repro_cpp_constants, {{"CONSTANT_INPUTS", joined(constants, ", ")}}), 1);
    }
    append_section(sections, fill_template(templates::repro_cpp_profiled, {}, profiled_flags), 1);
  }
  append_section(sections, reference.text, 1);
  append_section(sections, backend.text, 1);
  if (s.failure.run.backward)
    append_section(
        sections,
        fill_template(templates::repro_cpp_backward, {{"GRADIENT_INPUTS", joined(gradient_input_indices(c), ", ")}}),
        1);
  if (s.failure.status == Status::Accuracy || s.failure.run.backward) flags.insert(flag::compare_header);
  if (s.failure.status == Status::Accuracy) {
    flags.insert(flag::accuracy);
    const CompareOptions& cmp = s.failure.run.compare;
    append_section(
        sections,
        fill_template(templates::repro_cpp_compare, {{"TOL", cpp_double_literal(cmp.tol)},
                                                     {"COS", cpp_bool_literal(cmp.cos_similarity)},
                                                     {"EQUAL_NAN", cpp_bool_literal(cmp.equal_nan)},
                                                     {"USE_FP64", cpp_bool_literal(cmp.use_fp64)},
                                                     {"EXACT", cpp_bool_literal(cmp.exact_dtype)},
                                                     {"IGNORE_NON_FP", cpp_bool_literal(cmp.ignore_non_fp)}}),
        1);
  }
  values["SECTIONS"] = sections.substr(0, sections.find_last_not_of('\n') + 1);
  return fill_template(templates::repro_cpp_repro, values, flags, /*max_blank_lines=*/1);
}

std::string repro_cmake_source() { return templates::repro_cpp_cmake_lists; }

// include/tsrepro/compare.h and runner/exec/compare.cpp as one header for the one translation unit
// of repro.cpp: the header's own include line is dropped, nothing else changes.
std::string repro_cpp_compare_header() {
  std::string implementation = templates::repro_cpp_source_compare_cpp;
  const std::string include_line = "#include \"tsrepro/compare.h\"\n";
  if (const auto at = implementation.find(include_line); at != std::string::npos)
    implementation.erase(at, include_line.size());
  return std::string(
             "// Generated by tsrepro from its include/tsrepro/compare.h and runner/exec/compare.cpp: the\n"
             "// comparison tsrepro itself runs (and --backward's loss). Do not edit; regenerate with tsrepro.\n") +
         templates::repro_cpp_source_compare_h + "\n" + implementation;
}

}  // namespace tsrepro
