// `tsrepro import`: a saved module or IR text plus inputs become a self-contained Case.

#include <filesystem>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include <torch/script.h>
#include <torch/csrc/jit/ir/constants.h>

#include "runner/import/import.h"
#include "runner/file_util.h"
#include "runner/formats/bounded_json.h"
#include "runner/case/extension_libraries.h"
#include "runner/case/inputs.h"
#include "runner/formats/ir_limits.h"
#include "runner/graph/nested_nodes.h"
#include "runner/graph/saved_python_numbers.h"
#include "runner/formats/sound_values.h"
#include "runner/formats/zip_records.h"
#include "runner/import/ir_representable.h"
#include "runner/import/module_lifting.h"
#include "runner/import/tensor_constants.h"
#include "runner/import/verify.h"
#include "runner/import/wrapped_numbers.h"
#include "runner/worker/worker_client.h"
#include "tsrepro/compare.h"
#include "tsrepro/error.h"
#include "tsrepro/node_origin.h"

namespace tsrepro {
namespace {

using torch::jit::Block;
using torch::jit::Graph;
using torch::jit::Node;
using torch::jit::Value;

// Detached: parameters are inputs of a forward run here; --backward asks for gradients itself.
c10::IValue detached(const c10::IValue& value) {
  return value.isTensor() ? c10::IValue(value.toTensor().detach()) : value;
}

bool looks_like_zip(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && magic[0] == 'P' && magic[1] == 'K' && magic[2] == 3 && magic[3] == 4;
}

struct ImportedGraph {
  std::shared_ptr<Graph> graph;
  std::vector<LiftedInput> lifted;  // the last lifted.size() graph inputs
  // Per user input, the schema's default where the method declares one (a module's forward).
  std::vector<std::optional<c10::IValue>> defaults;
};

ImportedGraph graph_of_loaded_module(const torch::jit::Module& module, const std::string& method_name,
                                     const std::string& origin) {
  LiftedGraph lifted = lift_module_method(module, method_name, origin);
  // A trace's Python floats as eager has them: Scalar arguments where the op has such an overload.
  if (flag_saved_python_numbers(*lifted.graph) > 0) write_wrapped_numbers_as_scalars(*lifted.graph);
  make_ir_representable(*lifted.graph, origin);
  ImportedGraph imported{lifted.graph, std::move(lifted.lifted), {}};
  const auto& arguments = module.get_method(method_name).function().getSchema().arguments();
  for (size_t i = 1; i < arguments.size(); ++i) {
    // A loaded module's schema may give None as the "default" of an argument that has none
    // (`int n`): only a default of the argument's own type is one.
    const auto& fallback = arguments[i].default_value();
    const bool usable = fallback && fallback->type()->isSubtypeOf(*arguments[i].type());
    imported.defaults.push_back(usable ? std::optional<c10::IValue>(*fallback) : std::nullopt);
  }
  return imported;
}

// The module's state checked as an inputs.pt is (sound_values.h), and its storages against the
// archive's records: libtorch 1.13 builds each storage at the size its pickle declares over
// the record's bytes, however few. Which record backs which storage it does not say, so the
// sizes are matched largest to largest: torch.jit.save writes each storage's bytes exactly,
// and a truncated record leaves some storage larger than what is left to back it.
void check_module_storages(const torch::jit::Module& module, const std::string& origin) {
  std::vector<uint64_t> storage_bytes;
  auto note = [&](const c10::Storage& storage) { storage_bytes.push_back(storage.nbytes()); };
  c10::IValue state = module._ivalue();
  check_sound_value_or_leak(state, origin, note);
  for (const torch::jit::Method& method : module.get_methods())
    for (const Node* node : nested_nodes(method.graph()->block()))
      if (node->kind() == c10::prim::Constant && node->output()->type()->kind() == c10::TypeKind::TensorType)
        if (auto constant = torch::jit::toIValue(node->output())) check_sound_value(*constant, origin, note);
  std::vector<uint64_t> record_bytes;
  for (const auto& [name, size] : zip_record_sizes(origin))
    if (name.rfind("data/", 0) == 0 || name.rfind("constants/", 0) == 0) record_bytes.push_back(size);
  std::sort(storage_bytes.rbegin(), storage_bytes.rend());
  std::sort(record_bytes.rbegin(), record_bytes.rend());
  for (size_t i = 0; i < storage_bytes.size(); ++i)
    if (i >= record_bytes.size() || storage_bytes[i] > record_bytes[i])
      throw UserError(origin + ": a tensor's storage of " + std::to_string(storage_bytes[i]) +
                      " bytes has no record that large in the archive (a truncated file?)");
}

ImportedGraph graph_from_module(const ImportOptions& o) {
  torch::jit::Module module;
  try {
    module = torch::jit::load(o.source);
  } catch (const c10::Error& e) {
    throw UserError(o.source + ": not a TorchScript archive: " + one_line_error(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    // An unknown operator is a torch::jit::ErrorReport: usually an extension library not loaded.
    const std::string message = one_line_error(e.what());
    throw UserError(o.source + ": cannot load the module: " + message +
                    (message.find("Unknown builtin op") != std::string::npos
                         ? " (an operator from an extension library? pass it with --load-library)"
                         : ""));
  }
  check_module_storages(module, o.source);
  return graph_of_loaded_module(module, o.method, o.source);
}

// The parser takes constants the interpreter cannot hold (a bare `inf` for a float): the graph
// is at fault, whatever the inputs, and every later step would fail on it with no file named.
void check_constants_run(Block* block, const std::string& origin) {
  for (Node* node : block->nodes()) {
    if (node->kind() == c10::prim::Constant && node->outputs().size() == 1) {
      try {
        torch::jit::toIValue(node->output());
      } catch (const std::exception& e) {  // a std::runtime_error, not a c10::Error
        throw UserError(origin + ": the interpreter cannot run this graph (constant %" + node->output()->debugName() +
                        ": " + one_line_error(e.what()) + ")");
      }
    }
    for (Block* inner : node->blocks()) check_constants_run(inner, origin);
  }
}

// IR printed from a scripted module (print(m.graph)) starts with a class-typed %self, which
// parseIR cannot read (it only knows __torch__.classes.*). It is read as Any: unused, it is
// dropped; read from, the module's state is needed, which IR text does not carry.
// A plain scan, not std::regex: libstdc++'s regex recurses once per character matched, and a
// name of a megabyte overflowed the stack.
bool retype_class_typed_self(std::string& text) {
  auto is_name_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  static const std::string kHead = "graph(%", kClassType = " : __torch__.";
  if (text.rfind(kHead, 0) != 0) return false;
  size_t at = kHead.size();
  while (at < text.size() && is_name_char(text[at])) ++at;
  if (at == kHead.size() || text.compare(at, kClassType.size(), kClassType) != 0) return false;
  size_t type_end = at + kClassType.size();
  while (type_end < text.size() && is_name_char(text[type_end])) ++type_end;
  text.replace(at, type_end - at, " : Any");
  return true;
}

ImportedGraph graph_from_ir_file(const ImportOptions& o) {
  std::string text = read_file(o.source);
  const bool class_self = retype_class_typed_self(text);
  auto graph = graph_from_ir(text, o.source);
  check_constants_run(graph->block(), o.source);
  if (class_self) {
    Value* self = graph->inputs().at(0);
    if (self->hasUses())
      throw UserError(
          o.source + ": the graph uses the module %" + self->debugName() + " in " +
          describe_node(self->uses().at(0).user) +
          ", and IR text does not carry a module's state: import the module saved with torch.jit.save instead");
    graph->eraseInput(0);
  }
  return {graph, {}, {}};
}

// Constants nothing reads: libtorch's interpreter builds its code in time quadratic in the
// constants of a graph (25,000 unused ones took 9 s per run), and they say nothing about a bug.
void erase_unused_constants(Graph& graph) {
  std::vector<Block*> blocks{graph.block()};
  while (!blocks.empty()) {
    Block* block = blocks.back();
    blocks.pop_back();
    for (auto it = block->nodes().begin(); it != block->nodes().end();) {
      Node* node = *it++;
      for (Block* inner : node->blocks()) blocks.push_back(inner);
      if (node->kind() == c10::prim::Constant && !node->hasUses()) node->destroy();
    }
  }
}

// A Python call fills the arguments it was not given from the signature's defaults; so does
// import, for an inputs file or an --input-spec that gives fewer values than the graph takes.
template <typename Item, typename FromDefault>
void complete_with_defaults(std::vector<Item>& items, const ImportedGraph& imported, size_t user_inputs,
                            const std::string& origin, FromDefault from_default) {
  for (size_t i = items.size(); i < user_inputs; ++i) {
    const bool has_default = i < imported.defaults.size() && imported.defaults[i].has_value();
    if (!has_default)
      throw UserError(origin + ": the graph takes " + std::to_string(user_inputs) + " inputs but " +
                      std::to_string(items.size()) + " are given, and input " + std::to_string(i) + " (" +
                      imported.graph->inputs()[i]->debugName() + ") has no default");
    items.push_back(from_default(*imported.defaults[i]));
  }
}

void check_spec_fits_graph(const Graph& graph, const std::vector<InputSpec>& specs, size_t user_inputs) {
  if (specs.size() != user_inputs)
    throw UserError("--input-spec: the graph takes " + std::to_string(user_inputs) + " inputs, the spec gives " +
                    std::to_string(specs.size()));
  for (size_t i = 0; i < specs.size(); ++i) {
    const bool graph_wants_tensor = graph.inputs()[i]->type()->cast<c10::TensorType>() != nullptr;
    if (graph_wants_tensor != (specs[i].kind == "tensor"))
      throw UserError("--input-spec: item " + std::to_string(i) + " is a " + specs[i].kind + " but graph input '" +
                      graph.inputs()[i]->debugName() + "' is " + graph.inputs()[i]->type()->repr_str());
  }
}

// --origins: the recorded table replaces the one read from the imported file when it describes
// the same nodes (their kinds, in number order); the provenance says which was used and why.
void adopt_recorded_origins(Case& c, const std::string& path) {
  if (!std::ifstream(path)) throw UserError(path + ": cannot read the node origins");
  const nlohmann::json array = parse_bounded_json(read_file(path), path);
  check_entry_count(array, path);
  const std::shared_ptr<const NodeOrigins> recorded = origins_from_json(array, path);
  const NodeOrigins& own = *c.node_origins;
  bool same_nodes = recorded->size() == own.size();
  for (size_t i = 0; same_nodes && i < own.size(); ++i) same_nodes = (*recorded)[i].kind == own[i].kind;
  if (!same_nodes) {
    c.provenance["origins"] = "not used: " + path + " describes other nodes than the graph's " +
                              std::to_string(own.size()) + " (" + std::to_string(recorded->size()) + " nodes)";
    return;
  }
  c.node_origins = recorded;
  c.provenance["origins"] = path;
}

}  // namespace

void lift_tensor_constants(Case& c) {
  for (const LiftedConstant& constant : lift_tensor_constants(*c.graph)) {
    // A case's input is named by its place among them, and typed as plain tensors are.
    constant.input->setDebugName("const_" + std::to_string(c.inputs.size()));
    constant.input->setType(c10::TensorType::get());
    InputSpec spec = spec_from_value(constant.input->debugName(), constant.value);
    spec.lifted = true;
    spec.lifted_from = "constant";
    c.inputs.push_back(spec);
    if (c.values) c.values->push_back(constant.value);
  }
}

ModuleGraph module_graph(const torch::jit::Module& module, const std::string& method, const std::string& origin) {
  ImportedGraph imported = graph_of_loaded_module(module, method, origin);
  ModuleGraph out;
  out.graph = imported.graph;
  const size_t user_inputs = out.graph->inputs().size() - imported.lifted.size();
  Case lifted;
  lifted.graph = out.graph;
  lifted.values.emplace();
  for (size_t i = 0; i < imported.lifted.size(); ++i) {
    InputSpec spec = spec_from_value(out.graph->inputs()[user_inputs + i]->debugName(), imported.lifted[i].value);
    spec.lifted = true;
    spec.lifted_from = imported.lifted[i].from;
    lifted.inputs.push_back(spec);
    lifted.values->push_back(detached(imported.lifted[i].value));
  }
  lift_tensor_constants(lifted);
  out.trailing_specs = std::move(lifted.inputs);
  out.trailing_values = std::move(*lifted.values);
  return out;
}

Case import_case(const ImportOptions& o) {
  if (!std::ifstream(o.source)) throw UserError(o.source + ": no such file");
  if (o.inputs_path.empty() == o.input_spec.empty())
    throw UserError("import: give exactly one of --inputs INPUTS.pt and --input-spec SPEC");

  const bool is_archive = looks_like_zip(o.source);
  if (!is_archive && read_file(o.source).rfind("graph(", 0) != 0)
    throw UserError(o.source + ": neither a TorchScript archive (torch.jit.save) nor IR text starting with 'graph('");
  ImportedGraph imported = is_archive ? graph_from_module(o) : graph_from_ir_file(o);
  erase_unused_constants(*imported.graph);
  check_graph_limits(*imported.graph, o.source);

  Case c;
  c.graph = imported.graph;
  const size_t user_inputs = c.graph->inputs().size() - imported.lifted.size();
  if (!o.inputs_path.empty()) {
    std::vector<c10::IValue> values = read_input_values(o.inputs_path);
    complete_with_defaults(values, imported, user_inputs, o.inputs_path, [](const c10::IValue& v) { return v; });
    conform_to_graph_inputs(values, *c.graph);
    check_values_fit_graph(*c.graph, user_inputs, values, o.inputs_path);
    for (size_t i = 0; i < user_inputs; ++i) {
      c.inputs.push_back(spec_from_value(c.graph->inputs()[i]->debugName(), values[i]));
      if (values[i].isTensor()) values[i] = values[i].toTensor().detach();
    }
    c.values = std::move(values);
  } else {
    c.inputs = parse_input_spec(o.input_spec);
    complete_with_defaults(c.inputs, imported, user_inputs, "--input-spec",
                           [](const c10::IValue& v) { return spec_from_value("", v); });
    check_spec_fits_graph(*c.graph, c.inputs, user_inputs);
    for (size_t i = 0; i < user_inputs; ++i) c.inputs[i].name = c.graph->inputs()[i]->debugName();
  }
  for (size_t i = 0; i < imported.lifted.size(); ++i) {
    InputSpec spec = spec_from_value(c.graph->inputs()[user_inputs + i]->debugName(), imported.lifted[i].value);
    spec.lifted = true;
    spec.lifted_from = imported.lifted[i].from;
    c.inputs.push_back(spec);
    if (c.values) c.values->push_back(detached(imported.lifted[i].value));
  }
  lift_tensor_constants(c);
  c.node_origins = record_import_origins(*c.graph);
  c.libraries = libraries_called_by(*c.graph, loaded_extension_libraries());

  c.provenance = {{"source", o.source},
                  {"source_kind", is_archive ? "module" : "ir"},
                  {"method", is_archive ? o.method : ""},
                  {"imported_compute_nodes", count_compute_nodes(*c.graph)},
                  {"fake_inputs", !c.values.has_value()}};
  if (!o.origins_path.empty()) adopt_recorded_origins(c, o.origins_path);
  return c;
}

}  // namespace tsrepro

namespace tsrepro {

namespace {

// The reference's own error in an invalid verdict, first line: "RuntimeError: ..." of "the
// reference (eager) fails on this graph: RuntimeError: ...".
std::string reference_error(const Verdict& verdict) {
  std::string why = verdict.message;
  if (const size_t fails = why.find(") fails on "); fails != std::string::npos)
    if (const size_t colon = why.find(": ", fails); colon != std::string::npos) why = why.substr(colon + 2);
  return why.substr(0, why.find('\n'));
}

}  // namespace

void check_inputs_run(Case& c, const std::string& origin, RunnerProcess& runner, double timeout_seconds,
                      const std::string& model_path) {
  namespace fs = std::filesystem;
  const ScratchDirectory scratch_directory = ScratchDirectory::temporary("tsrepro-check");
  const fs::path scratch = scratch_directory.path();

  write_case(c, (scratch / "case").string());
  RunSpec run;
  run.backend = run.ref;  // the reference alone: do the inputs fit the model at all?
  run.timeout_seconds = timeout_seconds;
  const EvalRequest request = eval_request(c, run, (scratch / "case").string());
  const Verdict verdict = runner.evaluate(request);
  // The inputs fit when the interpreter runs on them. Two runs that differ (NaN outputs never
  // compare equal, dropout in training mode draws anew) still ran.
  if (verdict.status == Status::Pass || verdict.status == Status::Accuracy) return;
  const std::string why = reference_error(verdict);
  const std::string graph_origin = c.provenance.value("source", std::string("the graph"));
  if (verdict.status == Status::Invalid && verdict.phase == Phase::ReferenceCompile) {
    // Not the inputs: the graph itself cannot be run, whatever it is given.
    throw UserError(graph_origin + ": the interpreter cannot run this graph (" + why + ")");
  }
  if (verdict.seconds >= timeout_seconds) {
    std::ostringstream seconds;
    seconds << timeout_seconds;
    throw UserError(graph_origin + ": the interpreter did not finish within --timeout " + seconds.str() + " s on " +
                    origin + " (an endless loop? raise --timeout if it really runs this long)");
  }
  const bool raised = verdict.status == Status::Invalid && verdict.signature.empty() &&
                      verdict.message.find("crashed") == std::string::npos;
  std::string model_note;
  if (raised && !model_path.empty()) {
    // The model's own unoptimized run on the same inputs: where it fails the same way, the case is
    // the model and fails like it; where it does not, import changed what the model computes.
    const Verdict model = model_reference_verdict(c, model_path, run, runner);
    if (model.status == Status::Invalid && reference_error(model) == why) {
      c.provenance["reference_fails"] = {{"phase", phase_name(verdict.phase)}, {"message", why}};
      return;
    }
    model_note = model.status == Status::Invalid
                     ? "; the model's own unoptimized run fails otherwise: " + reference_error(model)
                     : "; the model's own unoptimized run does not fail on them: import changed what the model "
                       "computes, a defect of tsrepro";
  }
  throw UserError(origin + ": the inputs do not fit the graph (the interpreter " +
                  (raised ? "fails on them: " : "does not survive them: ") + why + ")" + model_note);
}

}  // namespace tsrepro
