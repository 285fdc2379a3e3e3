// The backward-failure localization of gradient_attribution.h: the isolated-nodes probe, then the
// bisection.

#include <algorithm>
#include <map>
#include <set>

#include <torch/script.h>

#include "minifier/gradient_attribution.h"
#include "runner/exec/evaluate.h"
#include "runner/graph/typed_nodes.h"

namespace tsrepro {
namespace {

using torch::jit::Node;

// kGradientPath + "<i>" or + "<i>.<j>...": the input index; nullopt for an output's path.
std::optional<size_t> gradient_input_index(const std::string& path) {
  const std::string prefix = kGradientPath;
  if (path.rfind(prefix, 0) != 0) return std::nullopt;
  const size_t start = prefix.size(), end = path.find('.', start);
  try {
    return std::stoul(path.substr(start, end == std::string::npos ? std::string::npos : end - start));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// A node without tensor outputs (a prim::ListConstruct of tensors) hands its gradients on to the
// one later node that reads it (aten::cat): that node's backward is the one that made them.
size_t attributed_node(const std::vector<Node*>& nodes, size_t reader) {
  const torch::jit::Graph& graph = *nodes[reader]->owningGraph();
  while (true) {
    const Node* node = nodes[reader];
    const bool tensors_out =
        std::any_of(node->outputs().begin(), node->outputs().end(),
                    [](const torch::jit::Value* v) { return v->type()->isSubtypeOf(*c10::TensorType::get()); });
    if (tensors_out) return reader;
    std::set<Node*> users;
    for (const torch::jit::Value* v : node->outputs())
      for (const torch::jit::Use& use : v->uses()) users.insert(top_level_owner(use.user, graph));
    if (users.size() != 1) return reader;
    const auto next = std::find(nodes.begin() + static_cast<std::ptrdiff_t>(reader) + 1, nodes.end(), *users.begin());
    if (next == nodes.end()) return reader;  // the graph's return, or no later node
    reader = static_cast<size_t>(next - nodes.begin());
  }
}

// The gradients a probe compared, each with the node that made it.
std::vector<ValueGradient> compared_gradients(const Verdict& v, const std::vector<IsolatedInput>& inputs) {
  std::vector<ValueGradient> gradients;
  for (const OutputDiff& d : v.outputs) {
    const std::optional<size_t> input = gradient_input_index(d.path);
    if (!input || *input >= inputs.size()) continue;
    gradients.push_back({inputs[*input].value, inputs[*input].reader, d});
  }
  return gradients;
}

// The inputs of graph_from(state, begin): the node of the state that reads each (the graph holds
// the state's nodes from `begin` on, in order), the first one when several do.
std::vector<IsolatedInput> inputs_of_suffix(const Case& suffix, size_t begin) {
  const std::vector<Node*> nodes = cuttable_nodes(*suffix.graph);
  std::map<const Node*, size_t> position;
  for (size_t i = 0; i < nodes.size(); ++i) position[nodes[i]] = begin + i;
  std::vector<IsolatedInput> inputs;
  for (torch::jit::Value* input : suffix.graph->inputs()) {
    IsolatedInput in{std::nullopt, input->debugName()};
    for (const torch::jit::Use& use : input->uses()) {
      const auto at = position.find(top_level_owner(use.user, *suffix.graph));
      if (at != position.end() && (!in.reader || at->second < *in.reader)) in.reader = at->second;
    }
    inputs.push_back(in);
  }
  return inputs;
}

// The loss --backward differentiates is the mean of each output, averaged over the outputs: with
// hundreds of outputs (an isolated real model) every gradient is so small that same()'s absolute
// tolerance passes any of them. Each floating tensor output y gets y.numel() * outputs times its
// gradient (typed_nodes.h, the identity the backward-accuracy fault is made of): the same values,
// and a gradient of 1 for each element, as if the loss were the sum of them all.
void give_outputs_unit_gradients(torch::jit::Graph& graph) {
  const c10::TypePtr int_type = c10::IntType::get();
  const size_t outputs = graph.outputs().size();
  torch::jit::WithInsertPoint at_end(graph.return_node());
  for (size_t i = 0; i < outputs; ++i) {
    torch::jit::Value* y = graph.outputs()[i];
    const auto type = y->type()->cast<c10::TensorType>();
    if (!type || (type->scalarType() && !c10::isFloatingType(*type->scalarType()))) continue;
    torch::jit::Value* numel = insert_typed(graph, c10::Symbol::fromQualString("aten::numel"), {y}, int_type);
    torch::jit::Value* scale =
        insert_typed(graph, c10::aten::mul, {numel, graph.insertConstant(static_cast<int64_t>(outputs))}, int_type);
    torch::jit::Value* extra = insert_typed(graph, c10::aten::sub, {scale, graph.insertConstant(1)}, int_type);
    graph.return_node()->replaceInput(i, with_scaled_gradient(graph, y, extra));
  }
}

std::optional<size_t> culprit_of_isolated(const Case& state, const Verdict& v, const std::vector<IsolatedInput>& leaves,
                                          std::vector<ValueGradient>& gradients) {
  gradients = compared_gradients(v, leaves);
  const std::vector<Node*> nodes = cuttable_nodes(*state.graph);
  std::optional<size_t> culprit;
  for (ValueGradient& g : gradients) {
    if (!g.reader) continue;
    g.reader = attributed_node(nodes, *g.reader);
    if (!g.diff.ok && (!culprit || *g.reader > *culprit)) culprit = g.reader;  // the first in backward order
  }
  return culprit;
}

}  // namespace

GradientAttribution attribute_backward_failure(const Case& state, const Verdict& whole, const ReferenceValues& refs,
                                               const GradientProbes& probes) {
  GradientAttribution result;
  const size_t n = cuttable_nodes(*state.graph).size();
  if (n == 0) {
    result.note = "the graph has no nodes";
    return result;
  }

  // 1. Every node isolated: one run, when what goes wrong is a number.
  if (whole.status == Status::Accuracy) {
    std::vector<IsolatedInput> leaves;
    if (std::optional<Case> isolated = with_every_node_isolated(state, refs, leaves)) {
      give_outputs_unit_gradients(*isolated->graph);
      ++result.runs;
      const std::optional<Verdict> v = probes.verdict_of(*isolated);
      if (v && v->status == Status::Accuracy) {
        std::vector<ValueGradient> gradients;
        if (std::optional<size_t> culprit = culprit_of_isolated(state, *v, leaves, gradients)) {
          result.culprit = culprit;
          result.method = "isolated nodes";
          result.gradients = std::move(gradients);
          return result;
        }
      }
    }
  }

  // 2. Bisection: graph_from(lo) fails (the whole graph, at first), graph_from(hi) does not.
  size_t lo = 0, hi = n;
  std::optional<Verdict> failing = whole, passing;
  std::optional<Case> failing_case = copy_case(state), passing_case;
  while (hi - lo > 1) {
    const size_t mid = lo + (hi - lo) / 2;
    std::optional<Case> from = graph_from(state, mid, refs);
    if (!from) {
      result.note = "the nodes before node " + std::to_string(mid) + " cannot be cut off";
      return result;
    }
    ++result.runs;
    const std::optional<Verdict> v = probes.verdict_of(*from);
    if (!v) {
      result.note = "no verdict to judge by";
      return result;
    }
    if (probes.still_fails(*v)) {
      lo = mid, failing = v, failing_case = std::move(from);
    } else {
      hi = mid, passing = v, passing_case = std::move(from);
    }
  }
  result.culprit = lo;
  result.method = "bisection";
  // What decided: the culprit's inputs' gradients (disagreeing), then its outputs' (agreeing).
  result.gradients = compared_gradients(*failing, inputs_of_suffix(*failing_case, lo));
  if (passing)
    for (ValueGradient& g : compared_gradients(*passing, inputs_of_suffix(*passing_case, hi)))
      result.gradients.push_back(std::move(g));
  return result;
}

}  // namespace tsrepro
