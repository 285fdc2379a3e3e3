#pragma once
// A backend's section of the reproducers, written once for both languages. Each backend says in
// backends/<id>/section.cpp what its section needs (values, flags, the helpers it calls), in
// terms of a Dialect; the writers render that through their dialect into the section template
// of their language, backends/<id>/repro.py or backends/<id>/repro.cpp.in, and into its head,
// backends/<id>/repro_head.py or repro_head.cpp.in (optional): what the program around the
// sections needs of the backend (headers, declarations, definitions), placed once before them at
// __BACKEND_HEADS__. No writer lists the backends, and the shared templates hold no backend's
// lines: the registry comes from backends/backends.def.

#include <string>
#include <string_view>

#include <memory>
#include <optional>

#include "repro/template_fill.h"
#include "tsrepro/backend.h"
#include "tsrepro/case.h"

namespace tsrepro {

// How one reproducer language writes what a section needs.
struct Dialect {
  const char* writer;  // "repro.py", "repro.cpp": for messages
  std::string (*bool_literal)(bool);
  std::string (*string_literal)(std::string_view);
  std::string (*comment_text)(std::string_view);
  // The program's names for what a section runs.
  const char* graph;         // the case's graph (the IR form)
  const char* edited_graph;  // the graph as the backend edits it (EditedGraph; the IR form)
  const char* model;         // the model in the module form
  const char* edited_model;  // the model as the backend edits it (the module form)
};
extern const Dialect kPythonDialect;
extern const Dialect kCppDialect;

// What a backend's section is made from.
struct SectionRequest {
  const Case& c;
  const Dialect& dialect;
  const std::string& spec;        // "nnc", or a name with the backend's own spec after a colon
  const BackendOptions& options;  // the reference gets none
  bool module_form;               // the model is source (repro/module_source.h), not IR text
  bool eager_module;              // that source is the eager module form (backends/eager_module.h)
  bool empty_inputs;              // repro.py's IR form feeds an empty list or dict (interpretable.py)
};

// What a section adds: its template's values and flags, flags of the program around it (a
// header its code needs), and the helper it calls to run the model, which repro.cpp
// (module.cpp.in, profiled.cpp.in) and repro.py (profiled.py) then define.
struct SectionParts {
  TemplateValues values;
  TemplateFlags flags;
  TemplateFlags program_flags;
  bool calls_interpreted = false;  // TorchScript's interpreter on the model
  bool calls_profiled = false;     // the profiling executor on the model
};

// A copy of the case's graph that a backend's section runs in its place, edited as the backend
// edits it (a test backend's faults that change numbers). The reproducers hold it beside
// the case's graph, in the same form: IR text (Dialect::edited_graph), or a module (edited_model).
struct EditedGraph {
  std::shared_ptr<torch::jit::Graph> graph;
  std::string edit;  // what the edit is, for a comment after the graph's name: "with ... at aten::relu: ..."
};

// How a backend appears in the reproducers: backends/<id>/section.cpp defines `<id>_repro`.
struct ReproBackend {
  // It runs the profiling executor: with a reference that does too, both would share the one
  // compiled forward of a scripted class, so the reproducers keep the IR form.
  bool profiles = false;
  // It freezes a module: the IR form carries the case as a module archive (CASE_MODULE).
  bool freezes = false;
  SectionParts (*section)(const SectionRequest&) = nullptr;
  // Under these options it receives the case's eager module form (PyTorch 2's module route,
  // backends/pt2_program.h): repro.py then holds the model as eager Python, no TorchScript in it.
  // Null for the backends that take the graph itself.
  bool (*receives_eager_module)(const BackendOptions&) = nullptr;
  // The graph its section runs in place of the case's (`spec` decides), or nullopt where it runs
  // the case's own. Null for the backends that never edit it.
  std::optional<EditedGraph> (*edited_graph)(const Case& c, const std::string& spec) = nullptr;
};

// "0, 2": the graph inputs a module's forward takes (those not lifted into its state), for the
// sections that call a module made of the case (CASE_MODULE) in the IR form.
std::string forward_input_list(const Case& c);

// The entry of `spec`'s backend. Throws UserError for an unknown backend.
const ReproBackend& repro_backend(const std::string& spec);

// A rendered section and its backend's head.
struct RenderedSection {
  std::string text;  // the function `ROLE`
  std::string head;  // backends/<id>/repro_head.*, filled; empty where the backend has none
  bool calls_interpreted = false;
  bool calls_profiled = false;
};

// The section of `request.spec` in the request's dialect: its template filled with the backend's
// parts, `common` values (ROLE, ...) and `form` flags (module, random, ...), and its head with the
// same. Its program flags are added to `program_flags`.
RenderedSection render_backend_section(const SectionRequest& request, const TemplateValues& common,
                                       const TemplateFlags& form, TemplateFlags& program_flags);

// The heads of the reference's and the backend's sections for __BACKEND_HEADS__: each once,
// `blank_lines` apart and around (2 in repro.py, 1 in repro.cpp); empty for none.
std::string backend_heads(const RenderedSection& reference, const RenderedSection& backend, int blank_lines);

}  // namespace tsrepro
