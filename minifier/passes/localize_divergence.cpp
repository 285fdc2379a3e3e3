// localize-divergence: for accuracy failures, one instrumented query finds where the numbers
// first go wrong. Every top-level tensor value becomes an extra graph output; the verdict's
// per-output diffs then name the earliest node whose value the backend gets wrong. The pass
// proposes that node alone, fed by the reference values of its inputs (then, failing that,
// the prefix up to it), so a 1000-node accuracy case shrinks in a handful of queries instead
// of a bisection. Where that node's wrong value has another dtype than the failure's signature
// (accuracy:float32 from a wrong int64 shift), it proposes the path from it to the first node
// whose wrong value has the signature's dtype instead.
//
// When only gradients are wrong (signature accuracy:backward:...), extra outputs would show
// nothing: the culprit is the node whose backward goes wrong, found by gradient attribution
// (gradient_attribution.h: one run with every node isolated, else a bisection), and proposed
// alone in the same way.

#include "minifier/gradient_attribution.h"
#include "minifier/pass.h"

namespace tsrepro {
namespace {

// The state with every top-level tensor value as an extra output; out_owner[i] is the index
// (in cuttable_nodes) of the node that makes extra output i.
Case instrumented(const Case& state, std::vector<size_t>& out_owner) {
  Case probe = copy_case(state);
  const std::vector<torch::jit::Node*> nodes = cuttable_nodes(*probe.graph);
  for (size_t i = 0; i < nodes.size(); ++i)
    for (torch::jit::Value* v : nodes[i]->outputs())
      if (v->type()->cast<c10::TensorType>()) {
        probe.graph->registerOutput(v);
        out_owner.push_back(i);
      }
  return probe;
}

// The earliest node whose exposed value fails the comparison, if any; with `signature`, the
// earliest whose failing value would give the failure that signature (its dtype).
std::optional<size_t> first_divergent_node(const Verdict& v, size_t original_outputs,
                                           const std::vector<size_t>& out_owner,
                                           const std::optional<std::string>& signature = std::nullopt) {
  std::optional<size_t> first;
  for (const OutputDiff& d : v.outputs) {
    if (d.ok) continue;
    if (signature && accuracy_signature(d.dtype, Phase::Run) != *signature) continue;
    const size_t output = std::stoul(d.path.substr(0, d.path.find('.')));
    if (output < original_outputs || output - original_outputs >= out_owner.size()) continue;
    const size_t node = out_owner[output - original_outputs];
    if (!first || node < *first) first = node;
  }
  return first;
}

// Whether `node` only packs values into a list, tuple or dict that `reader` reads: an LSTM takes its
// weights as one list. Fed as a graph input instead, the list is not what the model ran (Inductor's
// LSTM bug of examples/bugs/inductor_lstm_inference shows only with the list built from buffers).
bool packs_for(torch::jit::Node* node, torch::jit::Node* reader) {
  const auto kind = node->kind();
  if (kind != c10::prim::ListConstruct && kind != c10::prim::TupleConstruct && kind != c10::prim::DictConstruct)
    return false;
  for (const torch::jit::Use& use : node->output()->uses())
    if (use.user == reader) return true;
  return false;
}

// The culprit alone, fed by the reference values of its inputs; failing that, the culprit with the
// lists it reads still built in the graph; failing that, the prefix up to it (its outputs alone:
// what does not feed it is not needed).
bool try_node_alone(PassContext& ctx, size_t culprit) {
  const Case& state = ctx.state();
  std::optional<Case> prefix = truncated_after(state, culprit, PrefixOutputs::LastNode);
  if (!prefix) return false;
  std::optional<Case> alone, with_packing;
  // Without reference values for this prefix, the prefix alone is still worth a try.
  if (const std::optional<ReferenceValues> refs = ctx.reference_values_of(*prefix)) {
    const std::vector<torch::jit::Node*> nodes = cuttable_nodes(*prefix->graph);  // the culprit is the last
    std::vector<size_t> before, before_packing;
    for (size_t i = 0; i + 1 < nodes.size(); ++i) {
      before.push_back(i);
      if (!packs_for(nodes[i], nodes.back())) before_packing.push_back(i);
    }
    if (!before.empty()) alone = with_nodes_cut(*prefix, before, *refs);
    if (before_packing.size() < before.size()) with_packing = with_nodes_cut(*prefix, before_packing, *refs);
  }
  return ctx.try_candidates({std::move(alone), std::move(with_packing), std::move(prefix)}).has_value();
}

// The nodes from the culprit to `last` alone, the culprit fed by the reference values of its
// inputs; failing that, the prefix up to `last`. For a culprit whose own value has another dtype
// than the failure's signature (an int64 shift that is wrong, a float32 output that shows it):
// `last` is the first node whose wrong value has the signature's dtype, and the path between
// them is what the failure needs.
bool try_culprit_through(PassContext& ctx, size_t culprit, size_t last) {
  const Case& state = ctx.state();
  std::optional<Case> prefix = truncated_after(state, last, PrefixOutputs::LastNode);
  if (!prefix) return false;
  std::optional<Case> window;
  if (const ReferenceValues* refs = ctx.state_reference_values())
    if (std::optional<Case> from = graph_from(state, culprit, *refs))
      window = truncated_after(*from, last - culprit, PrefixOutputs::LastNode);
  return ctx.try_candidates({std::move(window), std::move(prefix)}).has_value();
}

bool localize_backward(PassContext& ctx) {
  const ReferenceValues* refs = ctx.state_reference_values();
  if (!refs) return false;
  Verdict whole;  // the state fails as expected: in the backward pass, with wrong numbers
  whole.status = Status::Accuracy;
  whole.phase = Phase::Backward;
  const GradientProbes probes{
      [&](const Case& c) { return ctx.verdict_of(c); },
      [](const Verdict& v) { return v.status == Status::Accuracy && v.phase == Phase::Backward; }};
  const GradientAttribution found = attribute_backward_failure(ctx.state(), whole, *refs, probes);
  return found.culprit && try_node_alone(ctx, *found.culprit);
}

}  // namespace

bool localize_divergence_pass(PassContext& ctx) {
  if (ctx.expected_failure().status != Status::Accuracy) return ctx.skip("the failure kept is no accuracy failure");
  // On nodes it cut itself the instrumented run would name the same node again and propose the
  // same nodes: a query (under Inductor, a compile) for nothing.
  if (ctx.nodes_last_cut_by_this_pass()) return ctx.skip("its own cut made these nodes: it would name the same one");
  const Case& state = ctx.state();
  const size_t n = cuttable_nodes(*state.graph).size();
  if (n < 2) return ctx.skip("one node");
  if (ctx.expected_failure().signature.rfind(accuracy_signature("", Phase::Backward), 0) == 0)
    return localize_backward(ctx);
  std::vector<size_t> out_owner;
  const std::optional<Verdict> probe = ctx.verdict_of(instrumented(state, out_owner));
  if (!probe || probe->status != Status::Accuracy) return false;
  const size_t outputs = state.graph->outputs().size();
  const std::optional<size_t> culprit = first_divergent_node(*probe, outputs, out_owner);
  if (!culprit) return false;
  // Where the culprit's own wrong value has another dtype than the failure, the node alone
  // cannot keep the signature: ask once for the path to where the failure's dtype first shows.
  const std::string& signature = ctx.expected_failure().signature;
  const std::optional<size_t> shows = first_divergent_node(*probe, outputs, out_owner, signature);
  if (shows && *shows > *culprit) return try_culprit_through(ctx, *culprit, *shows);
  return try_node_alone(ctx, *culprit);
}

}  // namespace tsrepro
