// `tsrepro import`: a saved module or IR text plus inputs become a self-contained Case.

#include <filesystem>
#include <regex>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include <torch/script.h>
#include <torch/csrc/jit/ir/constants.h>

#include "runner/import/import.h"
#include "runner/file_util.h"
#include "runner/case/inputs.h"
#include "runner/import/ir_representable.h"
#include "runner/import/module_lifting.h"
#include "runner/import/tensor_constants.h"
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
ImportedGraph graph_from_ir_file(const ImportOptions& o) {
  static const std::regex class_typed_self(R"(^graph\((%[\w.]+) : __torch__\.[\w.]+)");
  std::string text = read_file(o.source);
  std::smatch match;
  const bool class_self = std::regex_search(text, match, class_typed_self);
  if (class_self) text = "graph(" + match[1].str() + " : Any" + match.suffix().str();
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

std::vector<std::string> split_top_level(const std::string& text) {
  std::vector<std::string> items;
  std::string current;
  int depth = 0;
  for (char ch : text) {
    if (ch == '[' || ch == '(') ++depth;
    if (ch == ']' || ch == ')') --depth;
    if (ch == ',' && depth == 0) {
      items.push_back(current);
      current.clear();
    } else if (!std::isspace(static_cast<unsigned char>(ch))) {
      current += ch;
    }
  }
  if (!current.empty()) items.push_back(current);
  return items;
}

InputSpec parse_scalar_item(const std::string& item) {
  const auto eq = item.find('=');
  const std::string kind = item.substr(0, eq), text = item.substr(eq + 1);
  InputSpec spec;
  spec.kind = kind;
  try {
    if (kind == "int")
      spec.value = std::stoll(text);
    else if (kind == "float")
      spec.value = std::stod(text);
    else if (kind == "bool" && (text == "true" || text == "false"))
      spec.value = text == "true";
    else
      throw std::invalid_argument(kind);
  } catch (const std::exception&) {
    throw UserError("--input-spec: cannot read '" + item + "' (scalars are int=V, float=V, bool=true|false)");
  }
  return spec;
}

InputSpec parse_tensor_item(const std::string& item) {
  const auto colon = item.find(':');
  if (colon == std::string::npos)
    throw UserError("--input-spec: '" + item + "' needs SIZES:DTYPE, e.g. 2x3:float32 or 4:int64[0,10)");
  InputSpec spec;
  spec.kind = "tensor";
  const std::string sizes = item.substr(0, colon);
  std::string rest = item.substr(colon + 1);
  const auto bracket = rest.find('[');
  const std::string dtype = rest.substr(0, bracket);
  spec.dtype = dtype_name(scalar_type_from_name(dtype, "--input-spec"));
  if (sizes != "scalar") {
    std::stringstream dims(sizes);
    std::string dim;
    while (std::getline(dims, dim, 'x')) {
      try {
        spec.sizes.push_back(std::stoll(dim));
      } catch (const std::exception&) {
        throw UserError("--input-spec: bad size '" + dim + "' in '" + item + "'");
      }
    }
  }
  const auto strides = c10::contiguous_strides(spec.sizes);
  spec.strides.assign(strides.begin(), strides.end());
  if (bracket != std::string::npos) {
    const std::string range = rest.substr(bracket);  // "[lo,hi)" or "[lo,hi]"
    const auto comma = range.find(',');
    const bool closed = !range.empty() && range.back() == ']';
    if (comma == std::string::npos || (range.back() != ')' && !closed))
      throw UserError("--input-spec: bad range '" + range + "' (write [lo,hi) or [lo,hi])");
    try {
      spec.min = std::stod(range.substr(1, comma - 1));
      spec.max = std::stod(range.substr(comma + 1, range.size() - comma - 2));
    } catch (const std::exception&) {
      throw UserError("--input-spec: bad range '" + range + "'");
    }
    const bool integral =
        spec.dtype != "float32" && spec.dtype != "float64" && spec.dtype != "float16" && spec.dtype != "bfloat16";
    if (!closed && integral) *spec.max -= 1;  // [0,10) for ints means 0..9
    if (*spec.max < *spec.min || (!integral && !closed && *spec.max == *spec.min))
      throw UserError("--input-spec: range '" + range + "' holds no value");
  }
  return spec;
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
  std::ifstream in(path);
  if (!in) throw UserError(path + ": cannot read the node origins");
  nlohmann::json array;
  try {
    array = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw UserError(path + ": not JSON (" + e.what() + ")");
  }
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

std::vector<InputSpec> parse_input_spec(const std::string& text) {
  std::vector<InputSpec> specs;
  for (const std::string& item : split_top_level(text))
    specs.push_back(item.find('=') != std::string::npos ? parse_scalar_item(item) : parse_tensor_item(item));
  return specs;
}

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

void check_inputs_run(const Case& c, const std::string& origin, RunnerProcess& runner) {
  namespace fs = std::filesystem;
  const ScratchDirectory scratch_directory = ScratchDirectory::temporary("tsrepro-check");
  const fs::path scratch = scratch_directory.path();

  write_case(c, (scratch / "case").string());
  RunSpec run;
  run.backend = "eager";
  run.timeout_seconds = kInputCheckTimeoutSeconds;
  const EvalRequest request = eval_request(c, run, (scratch / "case").string());
  const Verdict verdict = runner.evaluate(request);
  // The inputs fit when the interpreter runs on them. Two runs that differ (NaN outputs never
  // compare equal, dropout in training mode draws anew) still ran.
  if (verdict.status == Status::Pass || verdict.status == Status::Accuracy) return;
  std::string why = verdict.message;
  // "the reference (eager) fails on this graph: RuntimeError: ..." -> the error itself.
  if (auto colon = why.find("graph: "); colon != std::string::npos) why = why.substr(colon + 7);
  why = why.substr(0, why.find('\n'));
  if (verdict.status == Status::Invalid && verdict.phase == Phase::ReferenceCompile) {
    // Not the inputs: the graph itself cannot be run, whatever it is given.
    const std::string graph_origin = c.provenance.value("source", std::string("the graph"));
    throw UserError(graph_origin + ": the interpreter cannot run this graph (" + why + ")");
  }
  throw UserError(
      origin + ": the inputs do not fit the graph (the interpreter " +
      (verdict.status == Status::Invalid && verdict.signature.empty() && why.find("crashed") == std::string::npos
           ? "fails on them: "
           : "does not survive them: ") +
      why + ")");
}

}  // namespace tsrepro
