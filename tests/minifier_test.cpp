// The minifier: each pass on small graphs, then whole minifications of a ~120-node model for
// every injected fault. Candidates really run in tsrepro-runner workers.

#include <map>

#include <gtest/gtest.h>
#include <torch/script.h>

#include "minifier/pass.h"
#include "runner/import.h"
#include "tests/test_support.h"
#include "tsrepro/minify.h"

namespace tsrepro {
namespace {

const std::string kRunner = std::string(TSREPRO_BINARY_DIR) + "/tsrepro-runner";

class QuietObserver : public MinifyObserver {};

Case case_from_ir(const std::string& ir, std::vector<c10::IValue> values) {
  Case c;
  c.graph = graph_from_ir(ir, "test");
  for (size_t i = 0; i < values.size(); ++i) c.inputs.push_back(spec_from_value(c.graph->inputs()[i]->debugName(), values[i]));
  c.values = std::move(values);
  return c;
}

MinifyOptions options_for(const std::string& backend) {
  MinifyOptions o;
  o.backend = backend;
  o.runner_path = kRunner;
  o.timeout_seconds = 60;
  return o;
}

std::vector<std::string> node_kinds(const Case& c) {
  std::vector<std::string> kinds;
  for (torch::jit::Node* n : cuttable_nodes(*c.graph)) kinds.push_back(n->kind().toQualString());
  return kinds;
}

// Runs one pass on `state` against a real oracle; returns whether it changed the state.
struct PassHarness {
  explicit PassHarness(Case initial, const std::string& backend)
      : options(options_for(backend)), oracle(options, observer), state(std::move(initial)), ctx(oracle, state, observer, steps) {
    state.expected = {};
    oracle.check_original(state);
  }
  bool run(PassFunction pass) {
    ctx.begin_pass("test");
    return pass(ctx);
  }
  MinifyOptions options;
  QuietObserver observer;
  Oracle oracle;
  Case state;
  std::vector<AcceptedStep> steps;
  PassContext ctx;
};

const char* kChain = R"IR(graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::relu(%a)
  %c : Tensor = aten::tanh(%b)
  %d : Tensor = aten::add(%c, %x, %one)
  %e : Tensor = aten::sigmoid(%d)
  return (%e)
)IR";

TEST(TruncateSuffix, DropsEverythingAfterTheCulprit) {
  PassHarness h(case_from_ir(kChain, {at::randn({4})}), "inject:runtime-error@aten::relu");
  EXPECT_TRUE(h.run(truncate_suffix_pass));
  EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::sin", "aten::relu"}));
  EXPECT_LE(h.oracle.stats().queries, 1u + 3u);  // sanity + ~log2(5)
}

TEST(LocalizeDivergence, OneInstrumentedRunFindsTheFirstWrongNode) {
  PassHarness h(case_from_ir(kChain, {at::randn({4})}), "inject:accuracy@aten::relu");
  const size_t before = h.oracle.stats().queries;
  EXPECT_TRUE(h.run(localize_divergence_pass));
  EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::relu"}));
  EXPECT_LE(h.oracle.stats().queries - before, 2u);  // the instrumented run + the culprit alone
}

TEST(LocalizeDivergence, LeavesOtherFailuresToTheOtherPasses) {
  PassHarness h(case_from_ir(kChain, {at::randn({4})}), "inject:runtime-error@aten::relu");
  EXPECT_FALSE(h.run(localize_divergence_pass));
  EXPECT_EQ(h.oracle.stats().queries, 1u);  // the sanity run only
}

TEST(CutNodes, ReplacesWhatFeedsTheCulpritByInputs) {
  const at::Tensor x = at::randn({4});
  PassHarness h(case_from_ir(kChain, {x}), "inject:runtime-error@aten::relu");
  EXPECT_TRUE(h.run(cut_nodes_pass));
  EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::relu"}));
  // The input that replaced aten::sin carries the value sin(x) had. (Other outputs may still be
  // there: removing them is remove-outputs' job.)
  torch::jit::Node* relu = cuttable_nodes(*h.state.graph).front();
  const auto& inputs = h.state.graph->inputs();
  const size_t fed_by = std::find(inputs.begin(), inputs.end(), relu->input(0)) - inputs.begin();
  ASSERT_LT(fed_by, inputs.size());
  EXPECT_TRUE(at::allclose(h.state.values->at(fed_by).toTensor(), at::sin(x)));
}

TEST(CutNodes, CutValuesAreTheReferenceValues) {
  Case c = case_from_ir(kChain, {at::tensor({0.5, -1.0})});
  ReferenceValues refs = compute_reference_values(c);
  std::optional<Case> cut = with_nodes_cut(c, {0}, refs);  // aten::sin
  ASSERT_TRUE(cut);
  ASSERT_EQ(cut->values->size(), 2u);  // x (still read by aten::add) and the cut value
  EXPECT_TRUE(at::allclose(cut->values->at(1).toTensor(), at::sin(at::tensor({0.5, -1.0}))));
  EXPECT_NO_THROW(graph_from_ir(graph_to_ir(*cut->graph), "cut"));
}

// A chain of `n` unary nodes with the given ops at the given positions (tanh elsewhere).
std::string chain_ir(size_t n, const std::map<size_t, std::string>& ops_at) {
  std::string ir = "graph(%v0 : Tensor):\n";
  for (size_t i = 0; i < n; ++i) {
    const auto op = ops_at.find(i);
    ir += "  %v" + std::to_string(i + 1) + " : Tensor = aten::" + (op == ops_at.end() ? "tanh" : op->second) + "(%v" +
          std::to_string(i) + ")\n";
  }
  return ir + "  return (%v" + std::to_string(n) + ")\n";
}

TEST(CutRanges, TwoCulpritsFarApartInLogarithmicQueries) {
  PassHarness h(case_from_ir(chain_ir(200, {{40, "relu"}, {130, "sigmoid"}}), {at::randn({4})}),
                "inject:compile-error@aten::relu+aten::sigmoid");
  ASSERT_TRUE(h.run(truncate_suffix_pass));  // the last node is now the sigmoid
  const size_t before = h.oracle.stats().queries;
  EXPECT_TRUE(h.run(cut_ranges_pass));
  EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::relu", "aten::sigmoid"}));
  // Per culprit: one "is it needed" query, a few probes from the top and a bisection of the gap
  // (12 queries here; cut-nodes took 57 for the same shape at 1000 nodes).
  EXPECT_LE(h.oracle.stats().queries - before, 18u);
}

TEST(CutRanges, KeepsEveryNodeOfAGraphThatNeedsThemAll) {
  PassHarness h(case_from_ir(chain_ir(3, {{0, "relu"}, {1, "sigmoid"}, {2, "abs"}}), {at::randn({4})}),
                "inject:compile-error@aten::relu+aten::sigmoid+aten::abs");
  EXPECT_FALSE(h.run(cut_ranges_pass));
  EXPECT_EQ(node_kinds(h.state).size(), 3u);
  EXPECT_LE(h.oracle.stats().queries, 1u + 3u);  // sanity + one "is it needed" query per node
}

TEST(ReferenceValues, OffloadedEqualInMemoryAndLeaveNoFilesBehind) {
  testing::TempDir root;
  const at::Tensor x = at::tensor({0.5, -1.0, 2.0});
  Case c = case_from_ir(kChain, {x});
  const ReferenceValues in_memory = compute_reference_values(c);
  {
    const ReferenceValues offloaded = compute_reference_values(c, root.path());
    EXPECT_TRUE(offloaded.offloaded());
    EXPECT_EQ(offloaded.size(), in_memory.size());
    EXPECT_EQ(offloaded.size(), 6u);  // every top-level value a node made, the constant's included
    std::vector<std::string> names;
    for (torch::jit::Node* node : cuttable_nodes(*c.graph)) names.push_back(node->output()->debugName());
    ASSERT_EQ(names.size(), 5u);
    for (const std::string& name : names) {
      ASSERT_TRUE(offloaded.find(name)) << name;
      EXPECT_TRUE(at::equal(offloaded.find(name)->toTensor(), in_memory.find(name)->toTensor())) << name;
    }
    EXPECT_TRUE(at::allclose(offloaded.find(names[1])->toTensor(), at::relu(at::sin(x))));
    EXPECT_FALSE(offloaded.find(c.graph->inputs()[0]->debugName()));  // inputs are the state's own values
    EXPECT_FALSE(std::filesystem::is_empty(root.path()));
    // A cut fed from disk is the same cut.
    std::optional<Case> cut = with_nodes_cut(c, {0}, offloaded);
    ASSERT_TRUE(cut);
    EXPECT_TRUE(at::equal(cut->values->at(1).toTensor(), at::sin(x)));
  }
  EXPECT_TRUE(std::filesystem::is_empty(root.path()));
}

TEST(RemoveOutputs, KeepsOnlyTheFailingOutput) {
  const char* ir = R"IR(graph(%x : Tensor):
  %a : Tensor = aten::relu(%x)
  %b : Tensor = aten::tanh(%x)
  %c : Tensor = aten::sigmoid(%x)
  return (%b, %a, %c)
)IR";
  PassHarness h(case_from_ir(ir, {at::randn({3})}), "inject:accuracy@aten::relu");
  EXPECT_TRUE(h.run(remove_outputs_pass));
  EXPECT_EQ(h.state.graph->outputs().size(), 1u);
  EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::relu"}));
}

TEST(Dce, DeletesSideEffectingChecks) {
  const char* ir = R"IR(graph(%x : Tensor):
  %msg : str = prim::Constant[value="bad input"]()
  %zero : int = prim::Constant[value=0]()
  %n : int = aten::dim(%x)
  %bad : bool = aten::eq(%n, %zero)
  prim::If(%bad)
    block0():
      prim::RaiseException(%msg)
      -> ()
    block1():
      -> ()
  %y : Tensor = aten::relu(%x)
  return (%y)
)IR";
  PassHarness h(case_from_ir(ir, {at::randn({3})}), "inject:runtime-error@aten::relu");
  EXPECT_TRUE(h.run(dce_pass));
  EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::relu"}));
}

TEST(RemoveUnusedInputs, DropsThem) {
  const char* ir = R"IR(graph(%x : Tensor, %unused : Tensor):
  %y : Tensor = aten::relu(%x)
  return (%y)
)IR";
  PassHarness h(case_from_ir(ir, {at::randn({3}), at::randn({3})}), "inject:runtime-error@aten::relu");
  EXPECT_TRUE(h.run(remove_unused_inputs_pass));
  EXPECT_EQ(h.state.inputs.size(), 1u);
}

TEST(ConsolidateInputs, FoldsScalarsAndMergesEqualTensors) {
  const char* ir = R"IR(graph(%x : Tensor, %y : Tensor, %k : int):
  %a : Tensor = aten::add(%x, %y, %k)
  %b : Tensor = aten::relu(%a)
  return (%b)
)IR";
  at::Tensor same = at::randn({3});
  PassHarness h(case_from_ir(ir, {same, same.clone(), int64_t{2}}), "inject:runtime-error@aten::relu");
  EXPECT_TRUE(h.run(consolidate_inputs_pass));
  EXPECT_EQ(h.state.inputs.size(), 1u);
  EXPECT_TRUE(h.state.values->at(0).isTensor());
}

TEST(ShrinkInputs, HalvesTensorsWhileTheFailureHolds) {
  const char* ir = R"IR(graph(%x : Tensor):
  %y : Tensor = aten::relu(%x)
  return (%y)
)IR";
  PassHarness h(case_from_ir(ir, {at::randn({8, 6})}), "inject:runtime-error@aten::relu");
  EXPECT_TRUE(h.run(shrink_inputs_pass));
  EXPECT_EQ(h.state.values->at(0).toTensor().numel(), 1);
  EXPECT_EQ(h.state.inputs[0].sizes, (std::vector<int64_t>{1, 1}));
}

TEST(Minify, OriginalThatDoesNotFailIsReported) {
  QuietObserver observer;
  Case c = case_from_ir(kChain, {at::randn({4})});
  EXPECT_THROW(minify(c, options_for("jit"), observer), NotFailingError);
}

TEST(Minify, TwoInteractingCulpritsStayTogether) {
  QuietObserver observer;
  Case c = case_from_ir(kChain, {at::randn({4})});
  MinifyResult r = minify(c, options_for("inject:compile-error@aten::relu+aten::sigmoid"), observer);
  std::vector<std::string> kinds = node_kinds(r.minimized);
  EXPECT_EQ(kinds, (std::vector<std::string>{"aten::relu", "aten::sigmoid"}));
  EXPECT_TRUE(r.one_minimal);
}

struct FaultCase {
  std::string fault;
  double timeout;
};

class MinifyChain100 : public ::testing::TestWithParam<FaultCase> {};

// The issue's bar: a model of 100+ nodes, every fault, at most 3 compute nodes left, culprit kept.
TEST_P(MinifyChain100, EndsWithAtMostThreeNodesIncludingTheCulprit) {
  Case c = import_case({testing::model_path("chain100_scripted.pt"), "forward",
                        testing::model_path("chain100_scripted.inputs.pt"), ""});
  ASSERT_GE(count_compute_nodes(*c.graph), 100u);
  MinifyOptions o = options_for("inject:" + GetParam().fault + "@aten::relu");
  o.timeout_seconds = GetParam().timeout;
  QuietObserver observer;
  MinifyResult r = minify(c, o, observer);
  std::vector<std::string> kinds = node_kinds(r.minimized);
  EXPECT_LE(r.final_nodes, 3u);
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "aten::relu"), kinds.end());
  EXPECT_TRUE(r.one_minimal);
  EXPECT_EQ(r.minimized.expected->backend, o.backend);
  EXPECT_FALSE(r.minimized.expected->signature.empty());
}

INSTANTIATE_TEST_SUITE_P(EveryFault, MinifyChain100,
                         ::testing::Values(FaultCase{"compile-error", 60}, FaultCase{"runtime-error", 60},
                                           FaultCase{"accuracy", 60}, FaultCase{"abort", 60},
                                           FaultCase{"segfault", 60}, FaultCase{"hang", 1.5}),
                         [](const auto& info) {
                           std::string name = info.param.fault;
                           name.erase(std::remove(name.begin(), name.end(), '-'), name.end());
                           return name;
                         });

TEST(Minify, ParallelWorkersGiveTheSameResultAndSteps) {
  Case c = import_case({testing::model_path("chain100_scripted.pt"), "forward",
                        testing::model_path("chain100_scripted.inputs.pt"), ""});
  QuietObserver observer;
  MinifyOptions one = options_for("inject:runtime-error@aten::tanh");
  MinifyOptions two = one;
  two.jobs = 2;
  MinifyResult a = minify(c, one, observer), b = minify(c, two, observer);
  EXPECT_EQ(graph_to_ir(*a.minimized.graph), graph_to_ir(*b.minimized.graph));
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i < a.steps.size(); ++i) {
    EXPECT_EQ(a.steps[i].pass, b.steps[i].pass);
    EXPECT_EQ(a.steps[i].nodes_after, b.steps[i].nodes_after);
  }
}

}  // namespace
}  // namespace tsrepro
