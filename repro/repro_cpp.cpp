// repro.cpp + CMakeLists.txt + tsrepro_compare.h: a short libtorch program that runs a case's graph
// in the reference and with the tested backend, and for an accuracy failure compares them with
// tsrepro's own comparison.
//
// The program is repro/templates/repro_cpp/repro.cpp.in with its placeholders filled and one
// section per backend family, as repro.py is made. Its inputs are the exact values the runner
// uses (the case's, or the runner's own fake ones), pickled into the source when they are small.
// The comparison is not a second version: tsrepro_compare.h is include/tsrepro/compare.h and
// runner/compare.cpp themselves, embedded by the build. Everything that comes from the case goes
// through repro/cpp_literal.h: nothing in a graph or a command line can become code.

#include <set>
#include <string>
#include <vector>

#include <torch/csrc/jit/serialization/pickle.h>

#include "repro/cpp_literal.h"
#include "repro/describe.h"
#include "repro/reproducer_case.h"
#include "repro/template_fill.h"
#include "repro/templates_repro_cpp.h"  // generated from repro/templates/repro_cpp/ and runner/compare.cpp
#include "runner/backends/inject.h"
#include "runner/extension_libraries.h"
#include "runner/inputs.h"
#include "tsrepro/backend.h"
#include "tsrepro/error.h"
#include "tsrepro/writer.h"

namespace tsrepro {
namespace {

const char* cpp_bool(bool value) { return value ? "true" : "false"; }

std::string pickled(const std::vector<c10::IValue>& values) {
  const std::vector<char> bytes = torch::jit::pickle_save(c10::ivalue::Tuple::create(values));
  return std::string(bytes.begin(), bytes.end());
}

std::string nnc_section(const std::string& role, const BackendOptions& options, TemplateFlags& program_flags) {
  TemplateFlags flags = nnc_option_flags(options);
  if (program_flags.count("module")) flags.insert("module");
  program_flags.insert("nnc");
  if (flags.count("no_inlining") || flags.count("dynamic_shapes") || flags.count("reductions"))
    program_flags.insert("nnc_options");
  if (flags.count("strategy")) program_flags.insert("strategy");
  return fill_template(templates::repro_cpp_backend_nnc, {{"ROLE", role}, {"STRATEGY", nnc_fusion_strategy(options)}},
                       flags);
}

std::string ofi_section(const Case& c, const std::string& role, const BackendOptions& options,
                        TemplateFlags& program_flags) {
  std::string forward_inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (!c.inputs[i].lifted) forward_inputs += (forward_inputs.empty() ? "" : ", ") + std::to_string(i);
  TemplateFlags flags = random_number_flags(*c.graph);
  // The module form returns several outputs as forward's one tuple, as its reference does.
  if (program_flags.count("module"))
    flags.insert("module");
  else
    flags.insert(c.graph->outputs().size() != 1 ? "packed" : "single");
  for (const char* storage : {"case_module_inline", "case_module_file"})
    if (program_flags.count(storage)) flags.insert(storage);
  if (backend_option_on(options, "mkldnn", true))
    flags.insert("mkldnn");
  else
    program_flags.insert("ofi_passes");
  return fill_template(templates::repro_cpp_backend_ofi,
                       {{"ROLE", role},
                        {"MODULE", program_flags.count("module") ? "Repro" : "kCaseModule"},
                        {"FORWARD_INPUTS", forward_inputs},
                        {"NUMERICS", cpp_bool(backend_option_on(options, "numerics", true))}},
                       flags);
}

std::string inject_section(const InjectPlan& plan, const std::string& spec, const std::string& role,
                           TemplateFlags& program_flags) {
  InjectSection parts = inject_section_parts(plan);
  if (program_flags.count("module") && parts.flags.erase("returns")) parts.flags.insert("returns_module");
  for (const char* header_user : {"abort", "segfault"})  // <cstdlib>, <csignal>
    if (parts.flags.count(header_user)) program_flags.insert(header_user);
  return fill_template(templates::repro_cpp_backend_inject,
                       {{"ROLE", role},
                        {"SPEC", cpp_comment_text(spec)},
                        {"OPS", cpp_comment_text(plan.op_text)},
                        {"MESSAGE", cpp_string_literal(parts.message)},
                        {"INJECTED", parts.runs_injected_graph ? "kInjected" : "kGraph"},
                        {"INJECTED_FORWARD", parts.runs_injected_graph ? "kInjectedForward" : "kForward"}},
                       parts.flags);
}

std::string backend_section(const Case& c, const std::string& spec, const BackendOptions& options,
                            const std::string& role, const std::optional<InjectPlan>& plan, TemplateFlags& flags) {
  const std::string family = backend_family(spec);
  TemplateFlags form;
  if (flags.count("module")) form.insert("module");
  TemplateFlags eager_flags = random_number_flags(*c.graph);
  eager_flags.insert(form.begin(), form.end());
  if (family == "eager") return fill_template(templates::repro_cpp_backend_eager, {{"ROLE", role}}, eager_flags);
  if (family == "jit") return fill_template(templates::repro_cpp_backend_jit, {{"ROLE", role}}, form);
  if (family == "nnc") return nnc_section(role, options, flags);
  if (family == "ofi") return ofi_section(c, role, options, flags);
  return inject_section(*plan, spec, role, flags);
}

// include/tsrepro/compare.h and runner/compare.cpp as one header for the one translation unit
// of repro.cpp: the header's own include line is dropped, nothing else changes.
std::string compare_header() {
  std::string implementation = templates::repro_cpp_source_compare_cpp;
  const std::string include_line = "#include \"tsrepro/compare.h\"\n";
  if (const auto at = implementation.find(include_line); at != std::string::npos)
    implementation.erase(at, include_line.size());
  return std::string(
             "// Generated by tsrepro from its include/tsrepro/compare.h and runner/compare.cpp: the\n"
             "// comparison tsrepro itself runs (and --backward's loss). Do not edit; regenerate with tsrepro.\n") +
         templates::repro_cpp_source_compare_h + "\n" + implementation;
}

}  // namespace

std::string repro_cpp_source(const Case& c, const ReproSettings& s) {
  return repro_cpp_source(c, s, repro_modules(c, s));
}

std::string repro_cpp_source(const Case& c, const ReproSettings& s, const ReproModules& modules) {
  // A backend needs a section file (repro/templates/repro_cpp/backend_<name>.cpp.in) to get a repro.cpp.
  static const std::set<std::string> kWithCppSection = {"eager", "jit", "nnc", "ofi", "inject"};
  check_backend_has_section(s.run.ref, "repro.cpp", kWithCppSection);
  check_backend_has_section(s.run.backend, "repro.cpp", kWithCppSection);
  TemplateFlags flags;
  TemplateValues values;
  add_common_values(c, s, cpp_comment_text, cpp_string_literal, values, flags);
  if (s.run.backward) flags.insert("backward");

  std::string libraries;
  for (const std::string& library : loaded_extension_libraries())
    libraries += (libraries.empty() ? "" : ", ") + cpp_string_literal(library);
  values["LIBRARIES"] = libraries;
  if (!libraries.empty()) flags.insert("libraries");
  std::optional<InjectPlan> plan;
  if (backend_family(s.run.backend) == "inject") plan = plan_inject(s.run.backend, *c.graph);
  const std::optional<InjectSection> injected =
      plan ? std::optional<InjectSection>(inject_section_parts(*plan)) : std::nullopt;
  // The model: Repro's forward as source (repro/module_source.h), or IR text where it cannot be.
  const bool module = modules.ir_form_reason.empty();
  if (module) {
    flags.insert("module");
    values["FORWARD"] = cpp_string_lines(modules.repro.printed_forward, "    ");
  } else {
    flags.insert("ir_form_reason");
    values["IR_FORM_REASON"] = cpp_comment_text(modules.ir_form_reason);
    values["GRAPH_IR"] = cpp_string_lines(reproducer_graph_ir(c, s), "    ");
  }
  if (injected && injected->runs_injected_graph) {
    flags.insert(module ? "injected_module" : "injected");
    if (module) values["INJECTED_FORWARD"] = cpp_string_lines(modules.injected->printed_forward, "    ");
    if (!module) values["INJECTED_IR"] = cpp_string_lines(graph_to_ir(*plan->graph), "    ");
    values["FIRST_OP"] = cpp_comment_text(plan->op_text.substr(0, plan->op_text.find('+')));
    values["FAULT_EDIT"] = cpp_comment_text(inject_edit_text(plan->fault));
    if (injected->flags.count("backward_error")) flags.insert("backward_error");
  }
  const std::vector<c10::IValue> inputs = reproducer_input_values(c, s);
  if (const std::optional<std::string>& case_module = modules.case_module) {
    const bool inline_module = case_module->size() <= kInlineModuleBytes;
    flags.insert(inline_module ? "case_module_inline" : "case_module_file");
    if (inline_module) values["CASE_MODULE_BYTES"] = cpp_string_lines(*case_module, "    ");
    if (!inline_module) flags.insert("files");
  }
  if (!uses_fake_inputs(c, s) && tensor_data_bytes(inputs) > kInlineInputBytes) {
    flags.insert("saved_inputs");
    flags.insert("files");
  } else {
    flags.insert("inline_inputs");
    values["INPUT_BYTES"] = cpp_string_lines(pickled(inputs), "    ");
  }

  std::string sections;
  const std::set<std::string> families = {backend_family(s.run.ref), backend_family(s.run.backend)};
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
    if (families.count("eager") || (injected && injected->runs_injected_graph)) uses.insert("interpreted");
    if (families.count("jit") || families.count("nnc")) uses.insert("profiled");
    if (uses.count("profiled") && random_number_flags(*c.graph).count("random")) uses.insert("profiled_random");
    if (modules.repro.needs_resolver || (modules.injected && modules.injected->needs_resolver)) {
      uses.insert("resolver");
      flags.insert("resolver");
    }
    append_section(sections,
                   fill_template(templates::repro_cpp_module,
                                 {{"ATTRIBUTES", joined(attributes, "\n")}, {"FORWARD_INPUTS", joined(forward_inputs, ", ")}},
                                 uses),
                   1);
  } else if (families.count("jit") || families.count("nnc")) {
    flags.insert("profiled");
    TemplateFlags profiled_flags = random_number_flags(*c.graph);
    if (c.graph->outputs().size() != 1) profiled_flags.insert("packed");
    append_section(sections, fill_template(templates::repro_cpp_profiled, {}, profiled_flags), 1);
  }
  // With --backward the sides are wrapped (backward.cpp.in): their own functions get other names.
  const std::string suffix = s.run.backward ? "_forward" : "";
  append_section(sections, backend_section(c, s.run.ref, {}, "reference" + suffix, std::nullopt, flags), 1);
  append_section(sections, backend_section(c, s.run.backend, s.run.backend_options, "backend" + suffix, plan, flags),
                 1);
  if (s.run.backward)
    append_section(
        sections,
        fill_template(templates::repro_cpp_backward, {{"GRADIENT_INPUTS", joined(gradient_input_indices(c), ", ")}}),
        1);
  if (s.expected_kind == "accuracy" || s.run.backward) flags.insert("compare_header");
  if (s.expected_kind == "accuracy") {
    flags.insert("accuracy");
    const CompareOptions& cmp = s.run.compare;
    append_section(sections,
                   fill_template(templates::repro_cpp_compare, {{"TOL", cpp_double_literal(cmp.tol)},
                                                                {"COS", cpp_bool(cmp.cos_similarity)},
                                                                {"EQUAL_NAN", cpp_bool(cmp.equal_nan)},
                                                                {"USE_FP64", cpp_bool(cmp.use_fp64)},
                                                                {"EXACT", cpp_bool(cmp.exact_dtype)},
                                                                {"IGNORE_NON_FP", cpp_bool(cmp.ignore_non_fp)}}),
                   1);
  }
  values["SECTIONS"] = sections.substr(0, sections.find_last_not_of('\n') + 1);
  return fill_template(templates::repro_cpp_repro, values, flags, /*max_blank_lines=*/1);
}

std::string repro_cmake_source() { return templates::repro_cpp_cmake_lists; }

std::map<std::string, std::string> reproducer_files(const Case& c, const ReproSettings& settings) {
  const ReproModules modules = repro_modules(c, settings);
  std::map<std::string, std::string> files = {{"repro.py", repro_py_source(c, settings, modules)},
                                              {"repro.cpp", repro_cpp_source(c, settings, modules)},
                                              {"CMakeLists.txt", repro_cmake_source()}};
  if (settings.expected_kind == "accuracy" || settings.run.backward) files["tsrepro_compare.h"] = compare_header();
  if (modules.case_module && modules.case_module->size() > kInlineModuleBytes)
    files["case_module.pt"] = *modules.case_module;
  return files;
}

}  // namespace tsrepro
