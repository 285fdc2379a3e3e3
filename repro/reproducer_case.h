#pragma once
// What both reproducer writers (repro.py, repro.cpp) take from a case and its settings in the
// same way: the graph's IR for the run's device, the model's form (and the graph a backend edits),
// whether the inputs fit into the source, the header placeholders.

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

#include "backends/eager_module.h"
#include "repro/module_source.h"
#include "repro/template_fill.h"
#include "runner/word_lists.h"
#include "repro/backend_section.h"
#include "tsrepro/backend.h"
#include "tsrepro/case.h"
#include "tsrepro/writer.h"

namespace tsrepro {

// Inputs up to this many bytes of tensor data are written into a reproducer; larger ones are
// read from the inputs.pt beside it.
inline constexpr size_t kInlineInputBytes = 4096;

// Module archives (ofi) up to this many bytes are written into a reproducer; larger ones are
// read from case_module.pt beside it.
inline constexpr size_t kInlineModuleBytes = 65536;

// The values the runner would feed the graph: the case's own, or its seeded fake ones.
std::vector<c10::IValue> reproducer_input_values(const Case& c, const ReproSettings& settings);
// The inputs that were the model's tensor constants (runner/case/constant_inputs.h) and that the
// graph reads: the IR form's profiling runs read them as constants again.
std::vector<std::string> used_constant_inputs(const Case& c);

// The case's graph with every Device constant naming the run's device (as tsrepro's --device
// does), and as graph.ir.
std::shared_ptr<torch::jit::Graph> reproducer_graph(const Case& c, const ReproSettings& settings);
std::string reproducer_graph_ir(const Case& c, const ReproSettings& settings);

// The model both reproducers write: the module form (repro/module_source.h), or why they keep
// the IR form. Made once per case (it prints and compiles the forward, and the IR form's archive
// holds the parameters): reproducer_files passes it to both writers.
struct ReproModules {
  ModuleForm repro;
  // The graph the backend's section runs in place of the case's (ReproBackend::edited_graph),
  // for the run's device, and its module form where the model is in that form.
  std::optional<EditedGraph> edited;
  std::optional<ModuleForm> edited_module;
  std::string ir_form_reason;  // non-empty: the IR form, for this reason
  // The eager module form (backends/eager_module.h), where the backend receives it (PyTorch 2's
  // module route): repro.py's model, with no TorchScript in it, whatever ir_form_reason says.
  std::optional<EagerModule> eager;
  // The IR form where the reference or the backend freezes (ofi): the module it freezes
  // (backends/case_module.h: the graph as forward, the lifted inputs holding the reproducer's input
  // values), as torch::jit::Module::save writes it. nullopt otherwise (the module form scripts Repro).
  std::optional<std::string> case_module;
};
ReproModules repro_modules(const Case& c, const ReproSettings& settings);

// The writers of writer.h with the model already made (they make it themselves otherwise).
std::string repro_py_source(const Case& c, const ReproSettings& settings, const ReproModules& modules);
std::string repro_cpp_source(const Case& c, const ReproSettings& settings, const ReproModules& modules);
// tsrepro_compare.h beside an accuracy or --backward repro.cpp: include/tsrepro/compare.h and
// runner/exec/compare.cpp as one header, the comparison tsrepro itself runs.
std::string repro_cpp_compare_header();
// runner/graph/nested_nodes.h and strict_fusion.{h,cpp} as tsrepro_strict_fusion.h, where the graph
// has a strict_fusion block.
std::string repro_cpp_strict_fusion_header();

// "aten::max_pool2d at resnet.py:270 (maxpool, node 17); ...": where the graph's nodes came
// from, for a reproducer's header; the first kListedNodeOrigins of them. Empty without origins.
inline constexpr size_t kListedNodeOrigins = 8;
std::string node_origins_text(const Case& c);

// Whether the reproducer makes its inputs from seeded fake values (a fake-only case has no inputs.pt).
bool uses_fake_inputs(const Case& c, const ReproSettings& settings);

// --backward: the inputs that get gradients in both reproducers, as decimal indices (the runner's
// own rule, gradient_inputs in runner/case/inputs.h).
std::vector<std::string> gradient_input_indices(const Case& c);

// {"random"} where the graph draws random numbers (a node libtorch calls nondeterministic: dropout
// in training, rand, bernoulli): the reproducers' lines that seed each compared call with kRunSeed,
// as tsrepro's runs are seeded, are kept only then. Elsewhere they would be noise.
TemplateFlags random_number_flags(const torch::jit::Graph& graph);

// The placeholders both reproducers fill the same way: the header's TITLE, VERSION, LIBTORCH, CPU,
// EXPECTED_TEXT, COMMAND (made safe by `comment`) and the run's EXPECTED, EXIT_ON_EXCEPTION,
// DEVICE (string literals made by `literal`), TIMEOUT_S and RUN_SEED; flags `command`, `cuda` and
// `random`.
void add_common_values(const Case& c, const ReproSettings& settings, std::string (*comment)(std::string_view),
                       std::string (*literal)(std::string_view), TemplateValues& values, TemplateFlags& flags);

// Appends a section after `separator` blank lines (two between Python's top-level definitions).
void append_section(std::string& source, const std::string& section, int separator);

}  // namespace tsrepro
