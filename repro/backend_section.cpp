// The backends' sections of the reproducers (repro/backend_section.h): the two dialects and the
// registry of section functions and templates, both made from backends/backends.def.

#include "repro/backend_section.h"

#include "backends/section_templates.h"  // generated from backends/*/repro.py and repro.cpp.in
#include "repro/cpp_literal.h"
#include "repro/python_literal.h"
#include "tsrepro/error.h"

namespace tsrepro {

// The section functions, declared from the table: backends/<id>/section.cpp defines each.
#define TSREPRO_BACKEND(id, spelling, option_keys, description, issue_label, under) \
  extern const ReproBackend id##_repro;
#include "backends/backends.def"
#undef TSREPRO_BACKEND

const Dialect kPythonDialect = {
    "repro.py", python_bool_literal, python_string_literal, python_comment_text, "GRAPH", "INJECTED",
    "Repro",    "Injected"};
const Dialect kCppDialect = {"repro.cpp", cpp_bool_literal, cpp_string_literal, cpp_comment_text,
                             "kGraph",    "kInjected",      "kForward",         "kInjectedForward"};

namespace {

struct SectionEntry {
  const char* id;
  const ReproBackend* backend;
  const char* python_template;  // backends/<id>/repro.py
  const char* cpp_template;     // backends/<id>/repro.cpp.in
};

// The table of backends/backends.def; a backend without its two templates or its section
// function does not build.
constexpr SectionEntry kSections[] = {
#define TSREPRO_BACKEND(id, spelling, option_keys, description, issue_label, under) \
  {#id, &id##_repro, templates::backend_##id##_repro_py, templates::backend_##id##_repro_cpp_in},
#include "backends/backends.def"
#undef TSREPRO_BACKEND
};

const SectionEntry& section_entry(const std::string& spec) {
  const BackendInfo* info = find_backend(spec);
  if (info)
    for (const SectionEntry& entry : kSections)
      if (info->name == entry.id) return entry;
  throw UserError("--backend " + spec + ": unknown backend (known: " + known_backends_text() + ")");
}

}  // namespace

const ReproBackend& repro_backend(const std::string& spec) { return *section_entry(spec).backend; }

std::string render_backend_section(const SectionRequest& request, const TemplateValues& common,
                                   const TemplateFlags& form, TemplateFlags& program_flags) {
  const SectionEntry& entry = section_entry(request.spec);
  SectionParts parts = entry.backend->section(request);
  TemplateValues values = common;
  for (auto& [name, value] : parts.values) values[name] = std::move(value);
  TemplateFlags flags = form;
  flags.insert(parts.flags.begin(), parts.flags.end());
  program_flags.insert(parts.program_flags.begin(), parts.program_flags.end());
  const bool python = &request.dialect == &kPythonDialect;
  return fill_template(python ? entry.python_template : entry.cpp_template, values, flags);
}

std::string forward_input_list(const Case& c) {
  std::string listed;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (!c.inputs[i].lifted) listed += (listed.empty() ? "" : ", ") + std::to_string(i);
  return listed;
}

}  // namespace tsrepro
