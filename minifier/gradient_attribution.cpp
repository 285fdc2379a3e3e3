// The backward-failure localization of gradient_attribution.h: the isolated-nodes probe, then the
// bisection.

#include <torch/script.h>

#include "minifier/gradient_attribution.h"

namespace tsrepro {
namespace {

using torch::jit::Node;

// "grad.<i>" or "grad.<i>.<j>...": the input index; nullopt for an output's path.
std::optional<size_t> gradient_input_index(const std::string& path) {
  const std::string prefix = "grad.";
  if (path.rfind(prefix, 0) != 0) return std::nullopt;
  const size_t start = prefix.size(), end = path.find('.', start);
  try {
    return std::stoul(path.substr(start, end == std::string::npos ? std::string::npos : end - start));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// A node without tensor outputs (a prim::ListConstruct of tensors) hands its gradients on to the
// one node that reads it (aten::cat): that node's backward is the one that made them.
size_t attributed_node(const std::vector<Node*>& nodes, size_t reader) {
  while (true) {
    Node* node = nodes[reader];
    bool tensors_out = false;
    std::optional<size_t> only_user;
    bool one_user = true;
    for (torch::jit::Value* v : node->outputs()) {
      tensors_out = tensors_out || v->type()->isSubtypeOf(*c10::TensorType::get());
      for (const torch::jit::Use& use : v->uses()) {
        Node* user = use.user;
        while (user->owningBlock() != node->owningGraph()->block()) user = user->owningBlock()->owningNode();
        const auto at = std::find(nodes.begin(), nodes.end(), user);
        const std::optional<size_t> index =
            at == nodes.end() ? std::nullopt : std::optional<size_t>(static_cast<size_t>(at - nodes.begin()));
        if (!index || (only_user && *only_user != *index)) one_user = false;
        only_user = index;
      }
    }
    if (tensors_out || !one_user || !only_user || *only_user <= reader) return reader;
    reader = *only_user;
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
  std::vector<IsolatedInput> inputs;
  for (torch::jit::Value* input : suffix.graph->inputs()) {
    IsolatedInput in{std::nullopt, input->debugName()};
    for (size_t i = 0; i < nodes.size() && !in.reader; ++i)
      for (const torch::jit::Use& use : input->uses()) {
        Node* user = use.user;
        while (user->owningBlock() != suffix.graph->block()) user = user->owningBlock()->owningNode();
        if (user == nodes[i]) in.reader = begin + i;
      }
    inputs.push_back(in);
  }
  return inputs;
}

// The loss --backward differentiates is the mean of each output, averaged over the outputs: with
// hundreds of outputs (an isolated real model) every gradient is so small that same()'s absolute
// tolerance passes any of them. Each tensor output y becomes y + (y - y.detach()) * (s - 1), with
// s = y.numel() * outputs: the same values, and a gradient of 1 for each element, as if the loss
// were the sum of them all. (The backward-accuracy fault uses the same identity.)
void give_outputs_unit_gradients(torch::jit::Graph& graph) {
  // Made by hand, typed: the interpreter then picks each overload by its inputs' types.
  auto op = [&](c10::Symbol kind, std::vector<torch::jit::Value*> inputs, const c10::TypePtr& type) {
    torch::jit::Value* out = graph.insertNode(graph.create(kind, inputs))->output();
    out->setType(type);
    return out;
  };
  const size_t outputs = graph.outputs().size();
  torch::jit::WithInsertPoint at_end(graph.return_node());
  for (size_t i = 0; i < outputs; ++i) {
    torch::jit::Value* y = graph.outputs()[i];
    const auto type = y->type()->cast<c10::TensorType>();
    if (!type || (type->scalarType() && !c10::isFloatingType(*type->scalarType()))) continue;
    const c10::TypePtr int_type = c10::IntType::get();
    torch::jit::Value* one = graph.insertConstant(1);
    torch::jit::Value* s = op(c10::aten::mul,
                              {op(c10::Symbol::fromQualString("aten::numel"), {y}, int_type),
                               graph.insertConstant(static_cast<int64_t>(outputs))},
                              int_type);
    torch::jit::Value* zero = op(c10::aten::sub, {y, op(c10::aten::detach, {y}, y->type()), one}, y->type());
    torch::jit::Value* scaled = op(c10::aten::mul, {zero, op(c10::aten::sub, {s, one}, int_type)}, y->type());
    graph.return_node()->replaceInput(i, op(c10::aten::add, {y, scaled, one}, y->type()));
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
