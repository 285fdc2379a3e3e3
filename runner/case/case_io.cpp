// Case directory I/O: case.json + graph.ir + inputs.pt, always written atomically.

#include <cctype>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <torch/script.h>
#include <torch/csrc/jit/ir/irparser.h>
#include <torch/version.h>
#include <unistd.h>

#include "runner/formats/bounded_json.h"
#include "runner/case/extension_libraries.h"
#include "runner/case/inputs.h"
#include "runner/formats/ir_limits.h"
#include "runner/graph/nested_nodes.h"
#include "runner/file_util.h"
#include "runner/formats/torch_save_reader.h"
#include "runner/formats/torch_save_writer.h"
#include "tsrepro/case.h"
#include "tsrepro/compare.h"
#include "tsrepro/error.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace tsrepro {
namespace {

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw UserError(path.string() + ": cannot write");
}

json optional_double(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::optional<double> double_or_none(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<double>();
}

json expected_to_json(const ExpectedFailure& e) {
  return {{"run", run_spec_to_json(e.run)},
          {"status", e.status ? json(status_name(*e.status)) : json(nullptr)},
          {"signature", e.signature},
          {"runs", e.runs},
          {"failed_runs", e.failed_runs}};
}

// Older case files kept only the reference, the backend and its options ("ref",
// "backend", "options") and the status as "kind" ("" for any failure); the rest of their RunSpec
// is the default.
RunSpec legacy_run_spec(const json& j) {
  RunSpec run;
  run.ref = j.value("ref", run.ref);
  run.backend = j.value("backend", "");
  const json options = j.value("options", json::object());  // a named copy: items() does not extend a temporary
  for (const auto& [key, value] : options.items())
    run.backend_options[key] = value.is_string() ? value.get<std::string>() : value.dump();
  return run;
}

ExpectedFailure expected_from_json(const json& j, const std::string& origin) {
  ExpectedFailure e;
  e.run = j.contains("run") ? run_spec_from_json(j.at("run")) : legacy_run_spec(j);
  const json status = j.contains("status") ? j.at("status") : json(j.value("kind", ""));
  if (status.is_string() && !status.get<std::string>().empty()) {
    try {
      e.status = status_from_name(status.get<std::string>());
    } catch (const std::exception&) {
      throw UserError(origin + ": expected_failure: unknown status " + status.dump());
    }
  }
  e.signature = j.value("signature", "");
  e.runs = j.value("runs", 0);
  e.failed_runs = j.value("failed_runs", 0);
  return e;
}

void count_nodes_in(const torch::jit::Block* block, size_t& count) {
  for (const torch::jit::Node* node : block->nodes()) {
    if (is_compute_node(*node)) ++count;
    for (const torch::jit::Block* inner : node->blocks()) count_nodes_in(inner, count);
  }
}

// A unique sibling of `dir`, so the final rename stays on one file system.
fs::path temporary_sibling(const fs::path& dir) {
  std::random_device random;
  std::ostringstream name;
  name << "." << dir.filename().string() << ".tmp-" << ::getpid() << "-" << std::hex << random();
  return dir.parent_path() / name.str();
}

}  // namespace

namespace {

// graph.ir's origin comments back into attributes, so that parseIR numbers the nodes again:
// "%y : Tensor = aten::relu(%x) # ... (node 17)" -> "%y : Tensor = aten::relu[tsrepro_origin=17](%x)".
std::string numbered_from_comments(const std::string& text) {
  if (text.find("(node ") == std::string::npos) return text;
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    std::string line = text.substr(start, end - start);
    const size_t hash = line.find(" # ");
    const std::optional<int64_t> index =
        hash == std::string::npos ? std::nullopt : index_in_origin_comment(line.substr(hash + 3));
    if (index) {
      // The kind starts after " = ", or at the indent for a node without outputs.
      const size_t equals = line.find(" = ");
      size_t kind = equals != std::string::npos && equals < hash ? equals + 3 : line.find_first_not_of(' ');
      const size_t bracket_or_paren = line.find_first_of("[(", kind);
      const std::string attribute = "tsrepro_origin=" + std::to_string(*index);
      if (bracket_or_paren != std::string::npos && bracket_or_paren < hash) {
        if (line[bracket_or_paren] == '[')
          line.insert(bracket_or_paren + 1, attribute + ", ");
        else
          line.insert(bracket_or_paren, "[" + attribute + "]");
      }
    }
    out += line;
    if (end < text.size()) out.push_back('\n');
    start = end + 1;
  }
  return out;
}

// The parser reads a complex attribute (`[value=1j]`) on any node, whatever type the line
// declares, and the printer writes it as "0.+1.j", which the parser cannot read:
// printable_constants.h rebuilds complex constants, but only a prim::Constant typed complex
// can be rebuilt. Any other complex attribute is refused here (fuzz/ir_text_fuzzer).
void check_complex_attributes(const torch::jit::Graph& graph, const std::string& origin) {
  for (const torch::jit::Node* node : nested_nodes(const_cast<torch::jit::Graph&>(graph).block())) {
    if (!node->hasAttributes()) continue;
    const bool constant = node->kind() == c10::prim::Constant && node->outputs().size() == 1;
    const c10::TypeKind type = constant ? node->output()->type()->kind() : c10::TypeKind::AnyType;
    for (const c10::Symbol name : node->attributeNames()) {
      const torch::jit::AttributeKind kind = node->kindOf(name);
      const bool rebuilt = constant && name == c10::attr::value &&
                           ((kind == torch::jit::AttributeKind::c && type == c10::TypeKind::ComplexType) ||
                            (kind == torch::jit::AttributeKind::cs && type == c10::TypeKind::ListType));
      if ((kind == torch::jit::AttributeKind::c || kind == torch::jit::AttributeKind::cs) && !rebuilt)
        throw UserError(origin + ": a complex attribute " + name.toUnqualString() + " on " +
                        node->kind().toQualString() +
                        " (IR text carries complex values only as constants typed complex)");
    }
  }
}

}  // namespace

std::shared_ptr<torch::jit::Graph> graph_from_ir(const std::string& text, const std::string& origin) {
  check_ir_text_limits(text, origin);
  auto graph = std::make_shared<torch::jit::Graph>();
  try {
    torch::jit::parseIR(numbered_from_comments(text), graph.get());
    graph->lint();
  } catch (const c10::Error& e) {
    throw UserError(origin + ": IR syntax error: " + one_line_error(e.what_without_backtrace()));
  } catch (const std::exception& e) {
    throw UserError(origin + ": IR syntax error: " + one_line_error(e.what()));
  }
  check_graph_limits(*graph, origin);
  check_complex_attributes(*graph, origin);
  return graph;
}

size_t count_compute_nodes(const torch::jit::Graph& graph) {
  size_t count = 0;
  count_nodes_in(graph.block(), count);
  return count;
}

InputSpec spec_from_value(const std::string& name, const c10::IValue& value) {
  InputSpec spec;
  spec.name = name;
  if (value.isTensor()) {
    const at::Tensor& t = value.toTensor();
    spec.kind = "tensor";
    spec.dtype = dtype_name(t.scalar_type());
    spec.sizes = t.sizes().vec();
    spec.strides = t.strides().vec();
    spec.storage_offset = t.storage_offset();
    spec.device = t.device().str();
    spec.requires_grad = t.requires_grad();
    if (t.numel() > 0 && !t.is_complex()) {
      at::Tensor finite = t.detach().to(at::kCPU).to(at::kDouble);
      finite = finite.masked_select(finite.isfinite());
      if (finite.numel() > 0) {
        spec.min = finite.min().item<double>();
        spec.max = finite.max().item<double>();
      }
    }
  } else if (value.isInt()) {
    spec.kind = "int";
    spec.value = value.toInt();
  } else if (value.isDouble()) {
    spec.kind = "float";
    spec.value = value.toDouble();
  } else if (value.isBool()) {
    spec.kind = "bool";
    spec.value = value.toBool();
  } else if (value.isNone()) {
    spec.kind = "none";
  } else if (value.isString()) {
    spec.kind = "str";
    spec.value = value.toStringRef();
  } else if (value.isIntList()) {
    spec.kind = "int[]";
    spec.value = value.toIntVector();
  } else {
    spec.kind = "other";
    spec.dtype = value.tagKind();
  }
  return spec;
}

json spec_to_json(const InputSpec& s) {
  json j = {{"name", s.name}, {"kind", s.kind}};
  if (s.kind == "tensor") {
    j["dtype"] = s.dtype;
    j["sizes"] = s.sizes;
    j["strides"] = s.strides;
    j["storage_offset"] = s.storage_offset;
    j["device"] = s.device;
    j["requires_grad"] = s.requires_grad;
    j["min"] = optional_double(s.min);
    j["max"] = optional_double(s.max);
  } else if (s.kind == "other") {
    j["type"] = s.dtype;
  } else if (!s.value.is_null()) {
    j["value"] = s.value;
  }
  j["lifted"] = s.lifted;
  if (s.lifted) j["lifted_from"] = s.lifted_from;
  return j;
}

InputSpec spec_from_json(const json& j, const std::string& origin) {
  try {
    InputSpec s;
    s.name = j.at("name").get<std::string>();
    s.kind = j.at("kind").get<std::string>();
    if (s.kind == "tensor") {
      s.dtype = j.at("dtype").get<std::string>();
      scalar_type_from_name(s.dtype, origin + ": input '" + s.name + "'");  // refused here, not mid-run
      s.sizes = j.at("sizes").get<std::vector<int64_t>>();
      s.strides = j.value("strides", std::vector<int64_t>{});
      s.storage_offset = j.value("storage_offset", int64_t{0});
      s.device = j.value("device", "cpu");
      s.requires_grad = j.value("requires_grad", false);
      s.min = double_or_none(j, "min");
      s.max = double_or_none(j, "max");
    } else if (s.kind == "other") {
      s.dtype = j.value("type", "");
    } else if (j.contains("value")) {
      s.value = j.at("value");
    }
    s.lifted = j.value("lifted", false);
    s.lifted_from = j.value("lifted_from", "");
    return s;
  } catch (const json::exception& e) {
    throw UserError(origin + ": bad input spec: " + e.what());
  }
}

namespace {

// The top-level checks that need no DOM: the format's name and version (from the scan).
void check_format(const TopLevelArray& scan, const fs::path& json_path) {
  const auto format = scan.top_level_scalars.find("format");
  if (format == scan.top_level_scalars.end() || !format->second.is_string() ||
      format->second.get<std::string>() != kCaseFormatName)
    throw UserError(json_path.string() + ": not a tsrepro case (format is not \"tsrepro-case\")");
  const auto found = scan.top_level_scalars.find("version");
  const json version = found == scan.top_level_scalars.end() ? json() : found->second;
  // A version is a whole number from 1 to the newest this tsrepro writes (none: the first). Not
  // json::value<int>: it truncates 1.5 to 1 and wraps 2^64 to 0.
  if (!version.is_null()) {
    if (!version.is_number_integer() || (version.is_number_unsigned() && version.get<uint64_t>() > INT32_MAX) ||
        version.get<int64_t>() < 1)
      throw UserError(json_path.string() + ": case format version " + version.dump().substr(0, 40) +
                      " is not a version (a whole number from 1)");
    if (version.get<int64_t>() > kCaseFormatVersion)
      throw UserError(json_path.string() + ": case format version " + version.dump() +
                      " is newer than this tsrepro understands (" + std::to_string(kCaseFormatVersion) + ")");
  }
}

Case case_from_json(const fs::path& dir, const fs::path& json_path, const json& meta,
                    std::shared_ptr<torch::jit::Graph> graph) {
  Case c;
  c.graph = std::move(graph);
  if (meta.contains("inputs")) check_entry_count(meta["inputs"], json_path.string() + ": inputs");
  if (meta.contains("node_origins")) check_entry_count(meta["node_origins"], json_path.string() + ": node_origins");
  for (const json& spec : meta.value("inputs", json::array()))
    c.inputs.push_back(spec_from_json(spec, json_path.string()));
  if (c.inputs.size() != c.graph->inputs().size())
    throw UserError(json_path.string() + ": lists " + std::to_string(c.inputs.size()) + " inputs but graph.ir takes " +
                    std::to_string(c.graph->inputs().size()));
  if (meta.contains("expected_failure") && meta["expected_failure"].is_object())
    c.expected = expected_from_json(meta["expected_failure"], json_path.string());
  c.provenance = meta.value("provenance", json::object());
  if (meta.contains("node_origins") && meta["node_origins"].is_array())
    c.node_origins = origins_from_json(meta["node_origins"], json_path.string() + ": node_origins");
  if (meta.contains("libraries")) check_entry_count(meta["libraries"], json_path.string() + ": libraries");
  for (const json& library : meta.value("libraries", json::array()))
    c.libraries.push_back({library.at("path").get<std::string>(), library.value("ops", std::vector<std::string>{})});

  const fs::path inputs_path = dir / "inputs.pt";
  if (meta.value("real_inputs", true)) {
    c10::IValue stored = read_torch_save(inputs_path.string());
    if (!stored.isTuple()) throw UserError(inputs_path.string() + ": expected a tuple of input values");
    c.values = stored.toTupleRef().elements().vec();
    if (c.values->size() != c.inputs.size())
      throw UserError(inputs_path.string() + ": holds " + std::to_string(c.values->size()) +
                      " values but the graph takes " + std::to_string(c.inputs.size()));
  }
  return c;
}

}  // namespace

Case load_case(const std::string& dir_name) {
  const fs::path dir(dir_name);
  if (!fs::is_directory(dir)) throw UserError(dir_name + ": not a case directory (no such directory)");
  const fs::path json_path = dir / "case.json";
  if (!fs::exists(json_path)) throw UserError(json_path.string() + ": missing (not a case directory?)");

  // What needs no DOM first, in one linear scan: the format, its version, how many inputs the
  // file lists (a case.json of a million entries is refused, or found not to fit the graph,
  // before anything is built of it).
  const std::string text = read_file(json_path.string());
  if (text.find_first_not_of(" \t\r\n") == std::string::npos || text[text.find_first_not_of(" \t\r\n")] != '{')
    throw UserError(json_path.string() + ": not a tsrepro case (not a JSON object)");
  const TopLevelArray listed = scan_top_level_array(text, "inputs", "", json_path.string());
  check_format(listed, json_path);
  const fs::path ir_path = dir / "graph.ir";
  std::shared_ptr<torch::jit::Graph> graph = graph_from_ir(read_file(ir_path.string()), ir_path.string());
  if (listed.entries != graph->inputs().size())
    throw UserError(json_path.string() + ": lists " + std::to_string(listed.entries) + " inputs but graph.ir takes " +
                    std::to_string(graph->inputs().size()));
  const json meta = parse_bounded_json(text, json_path.string());
  try {
    return case_from_json(dir, json_path, meta, std::move(graph));
  } catch (const json::exception& e) {
    // A field of the wrong type ("format": 1): nlohmann says which, libtorch never sees it.
    throw UserError(json_path.string() + ": malformed: " + e.what());
  }
}

void write_case(const Case& c, const std::string& dir_name, bool replace,
                const std::map<std::string, std::string>& extra_files, const std::string& inputs_source) {
  fs::path dir = fs::absolute(dir_name).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();  // "out/" names the directory out
  if (fs::exists(dir) && !replace) throw UserError(dir_name + ": already exists (choose another -o or remove it)");
  std::error_code ec;
  fs::create_directories(dir.parent_path(), ec);
  if (ec) throw UserError(dir_name + ": cannot create parent directory: " + ec.message());

  json meta = {{"format", kCaseFormatName},           {"version", kCaseFormatVersion},
               {"tsrepro_version", TSREPRO_VERSION},  {"torch_version", TORCH_VERSION},
               {"real_inputs", c.values.has_value()}, {"compute_nodes", count_compute_nodes(*c.graph)},
               {"provenance", c.provenance}};
  meta["inputs"] = json::array();
  for (const InputSpec& spec : c.inputs) meta["inputs"].push_back(spec_to_json(spec));
  meta["expected_failure"] = c.expected ? expected_to_json(*c.expected) : json(nullptr);
  if (c.node_origins) meta["node_origins"] = origins_to_json(*c.graph, *c.node_origins);
  for (const ExtensionLibrary& library : libraries_called_by(*c.graph, c.libraries))
    meta["libraries"].push_back({{"path", library.path}, {"ops", library.ops}});

  const fs::path staging = temporary_sibling(dir);
  if (!fs::create_directory(staging, ec) || ec)
    throw UserError(dir_name + ": cannot write here: " + (ec ? ec.message() : "cannot create a directory"));
  try {
    write_file(staging / "graph.ir", graph_to_ir_with_origins(*c.graph, c.node_origins.get()));
    if (c.values) {
      std::error_code link_error;
      if (!inputs_source.empty()) fs::create_hard_link(inputs_source, staging / "inputs.pt", link_error);
      if (inputs_source.empty() || link_error)
        write_torch_save((staging / "inputs.pt").string(), c10::ivalue::Tuple::create(*c.values));
    }
    for (const auto& [name, content] : extra_files) write_file(staging / name, content);
    write_file(staging / "case.json", meta.dump(2) + "\n");
    if (fs::exists(dir)) {
      const fs::path old = temporary_sibling(dir);
      fs::rename(dir, old);
      fs::rename(staging, dir);
      remove_tree(old.string());
    } else {
      fs::rename(staging, dir);
    }
  } catch (...) {
    remove_tree(staging.string());
    throw;
  }
}

}  // namespace tsrepro
