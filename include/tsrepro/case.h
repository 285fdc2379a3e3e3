#pragma once
// The case: one TorchScript graph, its inputs (real values or specs for fake ones), and what is
// known about it. On disk it is a case directory (docs/FORMATS.md): case.json, graph.ir and,
// for real inputs, inputs.pt. Everything else in tsrepro reads and writes cases through here.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>
#include <nlohmann/json.hpp>

#include "tsrepro/node_origin.h"
#include "tsrepro/run_spec.h"
#include "tsrepro/verdict.h"

namespace torch::jit {
struct Graph;
}

namespace tsrepro {

inline constexpr const char* kCaseFormatName = "tsrepro-case";
inline constexpr int kCaseFormatVersion = 1;

// What a graph input is, enough to make a fake value of the same shape and range.
struct InputSpec {
  std::string name;   // the graph input's debug name
  std::string kind;   // "tensor", "int", "float", "bool", "none", "other"
  std::string dtype;  // tensors: "float32", "int64", ...
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;
  int64_t storage_offset = 0;
  std::string device = "cpu";
  bool requires_grad = false;
  std::optional<double> min, max;  // value range seen (tensors with elements)
  nlohmann::json value;            // scalars: the value itself (kept even for fake-input cases)
  bool lifted = false;             // a parameter/buffer/attribute/tensor constant made an input
  std::string lifted_from;         // e.g. "self.conv.weight" or "constant"
};

// The failure a case was seen to show and how it was judged: case.json's "expected_failure".
// `run` is the whole RunSpec of the run that saw it (reference, backend and options, device,
// tolerances, backward, inputs, timeout), so that `report`, `minify --skip-sanity`/`--resume` and
// the writers judge the case again as it was judged, not under today's defaults.
struct ExpectedFailure {
  RunSpec run;
  std::optional<Status> status;  // none: any failure (minify --check-str and --test keep no status)
  std::string signature;
  // Of run.repeat runs, how many showed it when it was judged (0 of 0: not measured); fewer than
  // all: a flaky failure, and the reports say at what rate.
  int runs = 0;
  int failed_runs = 0;

  bool flaky() const { return failed_runs < runs; }
  // A failure a reproducer can check for: a status that is a failure.
  bool is_failure() const { return status && tsrepro::is_failure(*status); }
  // The status's name, "" for any failure: summary.json's "kind", repro.py's EXPECTED.
  std::string status_text() const { return status ? status_name(*status) : ""; }
};

// A library of custom operators (torchvision's _C.so) and the operators of it the graph calls:
// without it loaded, the graph cannot even be parsed (runner/case/extension_libraries.h).
struct ExtensionLibrary {
  std::string path;              // absolute
  std::vector<std::string> ops;  // "torchvision::nms"
};

struct Case {
  std::shared_ptr<torch::jit::Graph> graph;
  std::vector<InputSpec> inputs;                   // one per graph input, same order
  std::optional<std::vector<c10::IValue>> values;  // real input values; nullopt = fake only
  std::optional<ExpectedFailure> expected;
  nlohmann::json provenance = nlohmann::json::object();  // source file, method, node counts...
  // Where the graph's numbered nodes came from (node_origin.h); null for graphs without origins.
  std::shared_ptr<const NodeOrigins> node_origins;
  // The libraries of custom operators the graph calls (case.json keeps those whose operators the
  // graph still calls). Every command that reads the case loads them first.
  std::vector<ExtensionLibrary> libraries;
};

// Reads CASE/case.json, CASE/graph.ir and CASE/inputs.pt. Throws UserError naming the file.
Case load_case(const std::string& dir);

// Writes the case to `dir` atomically: everything goes to a fresh temporary sibling directory
// first, which is then renamed. Refuses (UserError) if `dir` exists unless `replace` is set.
// `extra_files` (name -> content, e.g. repro.py) are written into the same directory.
// `inputs_source`: a torch.save file known to hold exactly c.values (the inputs.pt they were
// read from): it is hard-linked into the case instead of written anew (written where no link can
// be made). tsrepro never changes an inputs.pt in place, so the two names stay the same file.
void write_case(const Case& c, const std::string& dir, bool replace = false,
                const std::map<std::string, std::string>& extra_files = {}, const std::string& inputs_source = "");

// Canonical IR text of the graph: what a worker runs, what the reproducers embed, what a
// candidate's cache key hashes. tsrepro's own node attributes (node_origin.h) are left out.
std::string graph_to_ir(const torch::jit::Graph& graph);

// The text of graph.ir: graph_to_ir's, with each numbered node's origin as a trailing comment
// ("# resnet.py:270:12 maxpool (node 17)") where `origins` has it.
std::string graph_to_ir_with_origins(const torch::jit::Graph& graph, const NodeOrigins* origins);

// Parses IR text; `origin` names the file in errors ("graph.ir: IR syntax error: ..."). The
// "(node N)" of an origin comment numbers its node again (graph_to_ir_with_origins' inverse).
std::shared_ptr<torch::jit::Graph> graph_from_ir(const std::string& text, const std::string& origin);

// Builds a spec from a value that flows into graph input `name`.
InputSpec spec_from_value(const std::string& name, const c10::IValue& value);

nlohmann::json spec_to_json(const InputSpec& spec);
InputSpec spec_from_json(const nlohmann::json& j, const std::string& origin);

// Whether a node only packs constants into a list, tuple or dict that nothing writes (a
// convolution's stride, `[1, 1]`): a literal, as its printed code and repro.py write it, not an
// operation. Its inputs are constants or such packs in turn.
bool packs_constants_only(const torch::jit::Node& node);

// A node that does real work: neither a prim::Constant nor a node that only packs constants.
// What count_compute_nodes counts, the minifier cuts and the drawings show.
bool is_compute_node(const torch::jit::Node& node);

// Nodes that do real work, nested blocks included: everything but prim::Constant and the nodes
// that only pack constants. The count summary.json, the minify summary, checkpoint names and
// titles give (docs/FORMATS.md).
size_t count_compute_nodes(const torch::jit::Graph& graph);

}  // namespace tsrepro
