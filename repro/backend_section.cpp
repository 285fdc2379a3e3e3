// The backends' sections of the reproducers (repro/backend_section.h): the two dialects and the
// registry of section functions and templates, both made from backends/backends.def.

#include "repro/backend_section.h"

#include "backends/section_templates.h"  // generated from backends/*/repro.py and repro.cpp.in
#include "repro/cpp_literal.h"
#include "runner/formats/python_literal.h"
#include "runner/word_lists.h"
#include "tsrepro/error.h"

namespace tsrepro {

// The section functions, declared from the table: backends/<id>/section.cpp defines each.
#define TSREPRO_BACKEND(id, spelling, option_keys, description, issue_label, under, roles) \
  extern const ReproBackend id##_repro;
#include "backends/backends.def"
#undef TSREPRO_BACKEND

const Dialect kPythonDialect = {
    "repro.py", python_bool_literal, python_string_literal, python_comment_text, "GRAPH", "EDITED", "Repro", "Edited"};
const Dialect kCppDialect = {"repro.cpp", cpp_bool_literal, cpp_string_literal, cpp_comment_text,
                             "kGraph",    "kEdited",        "kForward",         "kEditedForward"};

namespace {

struct SectionEntry {
  const char* id;
  const ReproBackend* backend;
  const char* python_template;  // backends/<id>/repro.py
  const char* cpp_template;     // backends/<id>/repro.cpp.in
  const char* python_head;      // backends/<id>/repro_head.py ("" without one)
  const char* cpp_head;         // backends/<id>/repro_head.cpp.in ("" without one)
};

// The table of backends/backends.def; a backend without its two templates or its section
// function does not build.
constexpr SectionEntry kSections[] = {
#define TSREPRO_BACKEND(id, spelling, option_keys, description, issue_label, under, roles) \
  {#id,                                                                                    \
   &id##_repro,                                                                            \
   templates::backend_##id##_repro_py,                                                     \
   templates::backend_##id##_repro_cpp_in,                                                 \
   templates::backend_##id##_repro_head_py,                                                \
   templates::backend_##id##_repro_head_cpp_in},
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

RenderedSection render_backend_section(const SectionRequest& request, const TemplateValues& common,
                                       const TemplateFlags& form, TemplateFlags& program_flags) {
  const SectionEntry& entry = section_entry(request.spec);
  SectionParts parts = entry.backend->section(request);
  TemplateValues values = common;
  for (auto& [name, value] : parts.values) values[name] = std::move(value);
  TemplateFlags flags = form;
  flags.insert(parts.flags);
  program_flags.insert(parts.program_flags);
  const bool python = &request.dialect == &kPythonDialect;
  RenderedSection rendered{fill_template(python ? entry.python_template : entry.cpp_template, values, flags), "",
                           parts.calls_interpreted, parts.calls_profiled};

  const std::string_view head = python ? entry.python_head : entry.cpp_head;
  if (head.empty()) return rendered;
  const std::string filled = fill_template(head, values, flags);
  const size_t first = filled.find_first_not_of('\n');
  if (first != std::string::npos) rendered.head = filled.substr(first, filled.find_last_not_of('\n') + 1 - first);
  return rendered;
}

std::string backend_heads(const RenderedSection& reference, const RenderedSection& backend, int blank_lines) {
  const std::string blank(static_cast<size_t>(blank_lines), '\n');
  std::vector<std::string> heads;
  if (!reference.head.empty()) heads.push_back(reference.head);
  if (!backend.head.empty() && backend.head != reference.head) heads.push_back(backend.head);
  return heads.empty() ? "" : blank + joined(heads, "\n" + blank) + blank;
}

std::string forward_input_list(const Case& c) {
  std::string listed;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    if (!c.inputs[i].lifted) listed += (listed.empty() ? "" : ", ") + std::to_string(i);
  return listed;
}

}  // namespace tsrepro
