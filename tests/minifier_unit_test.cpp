// The minifier without processes: every pass and the engine's guarantees, with the interest
// question answered by a predicate in this process (as PyTorch tests fx_minifier with has_mul).
// Milliseconds each; tests/minifier_test.cpp keeps the end-to-end runs through real workers.

#include <atomic>
#include <cmath>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>

#include <gtest/gtest.h>
#include <torch/script.h>

#include "minifier/oracle.h"
#include "minifier/pass.h"
#include "tests/support/cases.h"
#include "tsrepro/error.h"
#include "tsrepro/minify.h"
#include "tsrepro/node_origin.h"

namespace tsrepro {
namespace {

using testing::case_from_ir;
using testing::chain_ir;
using testing::has_op;
using testing::kChain;
using testing::node_kinds;

// The order in which the engine's states must shrink (nodes, inputs, outputs, input elements).
std::tuple<size_t, size_t, size_t, int64_t> size_of(const Case& c) {
  int64_t elements = 0;
  for (const c10::IValue& v : *c.values)
    if (v.isTensor()) elements += v.toTensor().numel();
  return {count_compute_nodes(*c.graph), c.inputs.size(), c.graph->outputs().size(), elements};
}

// Records every accepted state, to check that each is strictly smaller than the one before.
class RecordingObserver : public MinifyObserver {
 public:
  void on_start(const Case& state, const Verdict&) override { sizes.push_back(size_of(state)); }
  void on_accepted(const Case& state, const AcceptedStep&) override { sizes.push_back(size_of(state)); }
  std::vector<std::tuple<size_t, size_t, size_t, int64_t>> sizes;
};

// One pass on `state`, the predicate deciding.
struct PassHarness {
  PassHarness(Case initial, PredicateInterest::Predicate predicate, size_t parallelism = 1)
      : interest(std::move(predicate), parallelism),
        oracle(interest, observer),
        state(std::move(initial)),
        ctx(oracle, state, observer, steps) {
    oracle.check_original(state);
  }
  bool run(PassFunction pass) {
    ctx.begin_pass("test");
    return pass(ctx);
  }
  size_t queries() const { return oracle.stats().queries; }

  RecordingObserver observer;
  PredicateInterest interest;
  Oracle oracle;
  Case state;
  std::vector<AcceptedStep> steps;
  PassContext ctx;
};

MinifyResult minify_with(const Case& c, PredicateInterest::Predicate predicate, size_t parallelism = 1,
                         MinifyObserver* observer = nullptr) {
  MinifyObserver quiet;
  PredicateInterest interest(std::move(predicate), parallelism);
  return minify(c, MinifyOptions{}, interest, observer ? *observer : quiet);
}

// The interpreter's own answer: is some output element negative? (A property of the values, so
// the passes that feed reference values in and shrink inputs are tested on real numbers.)
bool some_output_negative(const Case& c) {
  torch::jit::GraphExecutor executor(c.graph->copy(), "predicate");
  torch::jit::Stack stack(c.values->begin(), c.values->end());
  executor.run(stack);
  for (const c10::IValue& v : stack)
    if (v.isTensor() && v.toTensor().is_floating_point() && v.toTensor().lt(0).any().item<bool>()) return true;
  return false;
}

// ---- the passes ---------------------------------------------------------------------------------

TEST(TruncateSuffix, DropsEverythingAfterTheCulpritInLogarithmicQueries) {
  PassHarness h(case_from_ir(chain_ir(64, {{20, "relu"}}), {at::randn({4})}), has_op("aten::relu"));
  EXPECT_TRUE(h.run(truncate_suffix_pass));
  EXPECT_EQ(node_kinds(h.state).size(), 21u);
  EXPECT_EQ(node_kinds(h.state).back(), "aten::relu");
  EXPECT_LE(h.queries(), 1u + 8u);  // the original + a bisection over 64
}

// Blocks of two branches, x' = g(sin(x)) + cos(x), with a shape query on the second (an int the
// add reads as its alpha, 1 for these 1-d inputs): five positions each, a DAG like a real
// model's rather than a chain. g is tanh, or relu in the culprit's block (position 5 * block + 1).
std::string two_branch_ir(size_t blocks, size_t culprit_block) {
  std::string ir = "graph(%x0 : Tensor):\n";
  for (size_t b = 0; b < blocks; ++b) {
    const std::string x = "%x" + std::to_string(b), s = std::to_string(b);
    ir += "  %f" + s + " : Tensor = aten::sin(" + x + ")\n";
    ir += "  %g" + s + " : Tensor = aten::" + (b == culprit_block ? "relu" : "tanh") + "(%f" + s + ")\n";
    ir += "  %h" + s + " : Tensor = aten::cos(" + x + ")\n";
    ir += "  %n" + s + " : int = aten::dim(%h" + s + ")\n";
    ir += "  %x" + std::to_string(b + 1) + " : Tensor = aten::add(%g" + s + ", %h" + s + ", %n" + s + ")\n";
  }
  return ir + "  return (%x" + std::to_string(blocks) + ")\n";
}

TEST(BisectWindow, FindsOneCulpritOnOneBranchOfABlockWhereverItSits) {
  for (size_t culprit_block : {0u, 3u, 31u, 63u}) {
    SCOPED_TRACE("culprit in block " + std::to_string(culprit_block));
    PassHarness h(case_from_ir(two_branch_ir(64, culprit_block), {at::randn({4})}), has_op("aten::relu"));
    EXPECT_TRUE(h.run(bisect_window_pass));
    EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::relu"}));
    // 320 positions: nine halvings, at most two queries each.
    EXPECT_LE(h.queries(), 1u + 2u * 9u);
  }
}

TEST(BisectWindow, AtTheEndOneQueryPerRound) {
  PassHarness h(case_from_ir(chain_ir(256, {{255, "relu"}}), {at::randn({4})}), has_op("aten::relu"));
  EXPECT_TRUE(h.run(bisect_window_pass));
  EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::relu"}));
  EXPECT_LE(h.queries(), 1u + 8u + 1u);  // the original, 8 rounds, and the first round's lower half
}

TEST(BisectWindow, StopsWhereTheFailureNeedsBothHalves) {
  const Case c = case_from_ir(chain_ir(64, {{10, "relu"}, {50, "sigmoid"}}), {at::randn({4})});
  PassHarness h(c, [](const Case& s) { return has_op("aten::relu")(s) && has_op("aten::sigmoid")(s); });
  h.run(bisect_window_pass);
  const std::vector<std::string> kinds = node_kinds(h.state);
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "aten::relu"), kinds.end());
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "aten::sigmoid"), kinds.end());
  // Neither half alone: the first round's upper half is taken to fail without asking, its halves
  // do not, and that half asked (it does not fail alone either) sends the search back to where it
  // started, whose halves it knows: the original, three queries and that one.
  EXPECT_LE(h.queries(), 1u + 4u);
}

// A value no graph input can hold, made at the top and read at the end (SSD's list of image
// sizes, a list of tuples its transform appends to): a window after it keeps it and the node that
// appends to it, instead of giving up on every window past it.
TEST(BisectWindow, KeepsAnEarlyValueNoInputCanHoldAndWhatWritesIt) {
  std::string ir = "graph(%x0 : Tensor):\n"
                   "  %sizes : (int, int)[] = prim::ListConstruct()\n"
                   "  %two : int = prim::Constant[value=2]()\n"
                   "  %pair : (int, int) = prim::TupleConstruct(%two, %two)\n"
                   "  %grown : (int, int)[] = aten::append(%sizes, %pair)\n";
  for (size_t i = 0; i < 64; ++i)
    ir += "  %x" + std::to_string(i + 1) + " : Tensor = aten::" + (i == 40 ? "relu" : "tanh") + "(%x" +
          std::to_string(i) + ")\n";
  ir += "  %n : int = aten::len(%sizes)\n"
        "  %out : Tensor = aten::add(%x64, %x64, %n)\n"
        "  return (%out)\n";
  Case c = case_from_ir(ir, {at::randn({4})});
  record_import_origins(*c.graph);  // nodes known by their origin, as an imported model's are
  PassHarness h(c, has_op("aten::relu"));
  EXPECT_TRUE(h.run(bisect_window_pass));
  const std::vector<std::string> kinds = node_kinds(h.state);
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "aten::relu"), kinds.end());
  EXPECT_LE(kinds.size(), 4u);  // the relu, and at most the list, its tuple and its append
  EXPECT_LE(h.queries(), 1u + 2u * 7u);
}

// mobilenet_v2's `if self.use_res_connect`: a branch on an input, and inside it one on a value
// the branch computes. Both levels go in one query, and what is left is the branch that ran.
const std::string kNestedBranchesIr =
    "graph(%x : Tensor, %use_res_connect : bool):\n"
    "  %y : Tensor = prim::If(%use_res_connect)\n"
    "    block0():\n"
    "      %n : int = aten::dim(%x)\n"
    "      %one : int = prim::Constant[value=1]()\n"
    "      %flat : bool = aten::eq(%n, %one)\n"
    "      %a : Tensor = prim::If(%flat)\n"
    "        block0():\n"
    "          %r : Tensor = aten::relu(%x)\n"
    "          -> (%r)\n"
    "        block1():\n"
    "          %t : Tensor = aten::tanh(%x)\n"
    "          -> (%t)\n"
    "      -> (%a)\n"
    "    block1():\n"
    "      %s : Tensor = aten::sin(%x)\n"
    "      -> (%s)\n"
    "  return (%y)\n";

TEST(FlattenTakenBranches, KeepsTheBranchesThatRanEveryLevelInOneQuery) {
  PassHarness h(case_from_ir(kNestedBranchesIr, {at::randn({4}), c10::IValue(true)}), has_op("aten::relu"));
  EXPECT_TRUE(h.run(flatten_taken_branches_pass));
  const std::vector<std::string> kinds = node_kinds(h.state);
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "aten::relu"), kinds.end());
  for (const char* gone : {"prim::If", "aten::tanh", "aten::sin"})
    EXPECT_EQ(std::find(kinds.begin(), kinds.end(), gone), kinds.end()) << gone;
  EXPECT_EQ(h.queries(), 1u + 1u);  // the original, then the flat graph
}

// Where the failure needs an If, the flat graph passes; one level at a time goes as far as it can.
TEST(FlattenTakenBranches, WhereTheFailureNeedsAnIfGoesOneLevelAtATime) {
  PassHarness h(case_from_ir(kNestedBranchesIr, {at::randn({4}), c10::IValue(true)}),
                [](const Case& s) { return has_op("aten::relu")(s) && has_op("prim::If")(s); });
  EXPECT_TRUE(h.run(flatten_taken_branches_pass));
  const std::vector<std::string> kinds = node_kinds(h.state);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "prim::If"), 1);  // the inner one, now on top
  EXPECT_EQ(std::find(kinds.begin(), kinds.end(), "aten::sin"), kinds.end());
  EXPECT_LE(h.queries(), 1u + 3u);
}

// ssd300's anchors: `for _ in image_list.image_sizes` runs once at batch 1, and its culprit was
// dug out by truncate-suffix and cut-ranges (53 queries where the bound is 32). A loop known to run
// once becomes one pass through its body, one known to run no time its initial values; a loop of
// two trips stays. The trip count here is a value the reference run made (aten::len of an input).
TEST(FlattenTakenBranches, ALoopKnownToRunOnceOrNeverIsFlattenedToo) {
  const std::string ir =
      "graph(%x : Tensor, %sizes : int[]):\n"
      "  %n : int = aten::len(%sizes)\n"
      "  %true : bool = prim::Constant[value=1]()\n"
      "  %zero : int = prim::Constant[value=0]()\n"
      "  %two : int = prim::Constant[value=2]()\n"
      "  %y : Tensor = prim::Loop(%n, %true, %x)\n"
      "    block0(%i : int, %a : Tensor):\n"
      "      %r : Tensor = aten::relu(%a)\n"
      "      -> (%true, %r)\n"
      "  %z : Tensor = prim::Loop(%zero, %true, %y)\n"
      "    block0(%j : int, %b : Tensor):\n"
      "      %s : Tensor = aten::sin(%b)\n"
      "      -> (%true, %s)\n"
      "  %w : Tensor = prim::Loop(%two, %true, %z)\n"
      "    block0(%k : int, %c : Tensor):\n"
      "      %t : Tensor = aten::tanh(%c)\n"
      "      -> (%true, %t)\n"
      "  return (%w)\n";
  PassHarness h(case_from_ir(ir, {at::randn({4}), c10::IValue(c10::List<int64_t>({3}))}), has_op("aten::relu"));
  EXPECT_TRUE(h.run(flatten_taken_branches_pass));
  const std::vector<std::string> kinds = node_kinds(h.state);
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "aten::relu"), kinds.end());  // at the top level now
  EXPECT_FALSE(has_op("aten::sin")(h.state));
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "prim::Loop"), 1);  // the loop of two trips
  EXPECT_TRUE(has_op("aten::tanh")(h.state));
  EXPECT_EQ(h.queries(), 1u + 1u);
}

TEST(TruncateSuffix, APrefixEndingOnTheOtherBranchKeepsTheCulprit) {
  // Block 5's relu is position 26; the prefixes ending on the other branch after it (its cos at
  // 27, its shape query at 28) do not read the relu, but hand its tensor on: it stays.
  const Case c = case_from_ir(two_branch_ir(8, 5), {at::randn({4})});
  ASSERT_EQ(cuttable_nodes(*c.graph)[26]->kind(), c10::aten::relu);
  for (size_t end : {27u, 28u}) {
    const std::optional<Case> prefix = truncated_after(c, end);
    ASSERT_TRUE(prefix.has_value());
    EXPECT_TRUE(has_op("aten::relu")(*prefix)) << "prefix ending at " << end;
    EXPECT_EQ(cuttable_nodes(*prefix->graph).size(), end + 1);  // no node of the prefix is dead
  }
  PassHarness h(c, has_op("aten::relu"));
  EXPECT_TRUE(h.run(truncate_suffix_pass));
  EXPECT_EQ(cuttable_nodes(*h.state.graph).size(), 27u);  // the shortest prefix ends at the relu
}

// SSD's backbone: the culprit's tensor leaves the first half only inside a list that later
// nodes append to and finally concatenate. The window returns the list, so the culprit is no dead
// code in the half that holds it, and the search ends on it.
TEST(BisectWindow, FollowsACulpritWhoseTensorLeavesInAList) {
  std::string ir = "graph(%x0 : Tensor):\n";
  for (size_t i = 0; i < 32; ++i) {
    ir += "  %x" + std::to_string(i + 1) + " : Tensor = aten::tanh(%x" + std::to_string(i) + ")\n";
    if (i == 3)
      ir += "  %normalized : Tensor = aten::relu(%x4)\n"  // a side branch, as SSD's L2Norm
            "  %features : Tensor[] = prim::ListConstruct(%normalized)\n";
  }
  for (size_t i = 0; i < 32; ++i)
    ir += "  %y" + std::to_string(i + 1) + " : Tensor = aten::sin(%" + (i == 0 ? "x32" : "y" + std::to_string(i)) +
          ")\n";
  ir += "  %more : Tensor[] = aten::append(%features, %y32)\n"
        "  %zero : int = prim::Constant[value=0]()\n"
        "  %out : Tensor = aten::cat(%features, %zero)\n"
        "  return (%out)\n";
  Case c = case_from_ir(ir, {at::randn({4})});
  record_import_origins(*c.graph);
  PassHarness h(c, has_op("aten::relu"));
  EXPECT_TRUE(h.run(bisect_window_pass));
  EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::relu"}));
  EXPECT_LE(h.queries(), 1u + 2u * 7u);
}

// An edit of an edit: the window's truncation drops a node the nodes after the window read (an
// int, which no prefix returns), and the cut that follows copies the truncated graph, which
// numbers its unnamed values afresh. The cut still feeds each value the state's reference
// value of that value, not that of the one now numbered as it was.
TEST(CutNodes, AnEditOfAnEditFeedsTheStatesValues) {
  const at::Tensor x = at::tensor({0.5, -1.0, 2.0});
  const Case state = with_copy_numbering(case_from_ir(
      "graph(%x : Tensor):\n"
      "  %1 : int = aten::dim(%x)\n"
      "  %2 : Tensor = aten::sin(%x)\n"
      "  %3 : Tensor = aten::cos(%2)\n"
      "  %4 : Tensor = aten::tanh(%3)\n"
      "  %5 : Tensor = aten::add(%4, %4, %1)\n"
      "  return (%5)\n",
      {x}));
  const ReferenceValues refs = compute_reference_values(state);
  const std::optional<Case> prefix = truncated_after(state, 3, PrefixOutputs::LastNode);  // dim goes
  ASSERT_TRUE(prefix.has_value());
  ASSERT_EQ(node_kinds(*prefix), (std::vector<std::string>{"aten::sin", "aten::cos", "aten::tanh"}));
  const std::optional<Case> window = graph_from_folding(*prefix, 2, refs);  // tanh alone
  ASSERT_TRUE(window.has_value());
  ASSERT_EQ(node_kinds(*window), (std::vector<std::string>{"aten::tanh"}));
  ASSERT_EQ(window->values->size(), 1u);
  EXPECT_TRUE(at::allclose(window->values->at(0).toTensor(), at::cos(at::sin(x))));
}

// A convolution's stride and padding lists are literals, no nodes: not counted, not cut. A list
// that an op appends to is state, and counts.
TEST(ComputeNodes, ListsOfConstantsAreLiteralsUnlessWritten) {
  const Case c = case_from_ir(
      "graph(%x : Tensor, %w : Tensor):\n"
      "  %none : NoneType = prim::Constant()\n"
      "  %1 : int = prim::Constant[value=1]()\n"
      "  %0 : int = prim::Constant[value=0]()\n"
      "  %stride : int[] = prim::ListConstruct(%1, %1)\n"
      "  %padding : int[] = prim::ListConstruct(%0, %0)\n"
      "  %y : Tensor = aten::conv2d(%x, %w, %none, %stride, %padding, %stride, %1)\n"
      "  %sizes : int[] = prim::ListConstruct(%1)\n"
      "  %more : int[] = aten::append(%sizes, %0)\n"
      "  %n : int = aten::len(%sizes)\n"
      "  %z : Tensor = aten::add(%y, %y, %n)\n"
      "  return (%z)\n",
      {at::randn({1, 1, 3, 3}), at::randn({1, 1, 1, 1})});
  EXPECT_EQ(count_compute_nodes(*c.graph), 5u);  // conv2d, the written list, append, len, add
  EXPECT_EQ(node_kinds(c), (std::vector<std::string>{"aten::conv2d", "prim::ListConstruct", "aten::append",
                                                     "aten::len", "aten::add"}));
}

// On 3 nodes the searching passes ask nothing: the engine's 1-minimality check cuts each node alone,
// which is the whole search there. On kChain's 5 they search.
TEST(SearchingPasses, LeaveAStateOfThreeNodesToTheOneMinimalCheck) {
  const char* three = "graph(%x : Tensor):\n  %a : Tensor = aten::sin(%x)\n  %b : Tensor = aten::relu(%a)\n"
                      "  %c : Tensor = aten::tanh(%b)\n  return (%c)\n";
  for (PassFunction pass : {bisect_window_pass, truncate_suffix_pass, cut_ranges_pass, cut_nodes_pass}) {
    PassHarness h(case_from_ir(three, {at::randn({4})}), has_op("aten::relu"));
    EXPECT_FALSE(h.run(pass));
    EXPECT_EQ(h.queries(), 1u);  // the sanity run only
  }
  PassHarness four(case_from_ir(kChain, {at::randn({4})}), has_op("aten::relu"));
  EXPECT_TRUE(four.run(cut_nodes_pass));
}

TEST(ShrinkInputs, TriesTheSmallestShapeFirst) {
  PassHarness h(
      case_from_ir("graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x)\n  return (%y)\n", {at::randn({8, 16, 4})}),
      has_op("aten::relu"));
  EXPECT_TRUE(h.run(shrink_inputs_pass));
  EXPECT_EQ(h.state.values->at(0).toTensor().sizes(), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(h.queries(), 1u + 1u);
}

TEST(CutNodes, LeavesTheCulpritFedByReferenceValues) {
  const at::Tensor x = at::randn({4});
  PassHarness h(case_from_ir(kChain, {x}), has_op("aten::relu"));
  EXPECT_TRUE(h.run(cut_nodes_pass));
  EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::relu"}));
  torch::jit::Node* relu = cuttable_nodes(*h.state.graph).front();
  const auto& inputs = h.state.graph->inputs();
  const size_t fed_by = std::find(inputs.begin(), inputs.end(), relu->input(0)) - inputs.begin();
  ASSERT_LT(fed_by, inputs.size());
  EXPECT_TRUE(at::allclose(h.state.values->at(fed_by).toTensor(), at::sin(x)));
}

TEST(CutRanges, TwoCulpritsFarApartInLogarithmicQueries) {
  const Case c = case_from_ir(chain_ir(200, {{30, "relu"}, {170, "sigmoid"}}), {at::randn({4})});
  PassHarness h(c, [](const Case& s) { return has_op("aten::relu")(s) && has_op("aten::sigmoid")(s); });
  EXPECT_TRUE(h.run(cut_ranges_pass));
  const std::vector<std::string> kinds = node_kinds(h.state);
  EXPECT_LE(kinds.size(), 4u);
  EXPECT_LE(h.queries(), 60u);
}

TEST(CutRanges, KeepsEveryNodeOfAGraphThatNeedsThemAll) {
  const auto all_three = [](const Case& s) {
    return has_op("aten::relu")(s) && has_op("aten::sigmoid")(s) && has_op("aten::abs")(s);
  };
  PassHarness h(case_from_ir(chain_ir(3, {{0, "relu"}, {1, "sigmoid"}, {2, "abs"}}), {at::randn({4})}), all_three);
  EXPECT_FALSE(h.run(cut_ranges_pass));
  EXPECT_EQ(node_kinds(h.state).size(), 3u);
  EXPECT_LE(h.queries(), 1u + 3u);  // the original + one "is it needed" query per node
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

// Gradient attribution's probe: each node reads its tensors from inputs of its own, fed their
// reference values, and every node's tensor is an output; x, read by two nodes, stays one input.
TEST(IsolatedNodes, EveryNodeReadsItsOwnInputsAndShowsItsOutputs) {
  const at::Tensor x = at::tensor({0.5, -1.0});
  Case c = case_from_ir(kChain, {x});
  const ReferenceValues refs = compute_reference_values(c);
  std::vector<IsolatedInput> leaves;
  std::optional<Case> iso = with_every_node_isolated(c, refs, leaves);
  ASSERT_TRUE(iso);
  ASSERT_EQ(leaves.size(), iso->graph->inputs().size());
  ASSERT_EQ(iso->values->size(), leaves.size());
  EXPECT_EQ(node_kinds(*iso), node_kinds(c));  // no node lost: each one's outputs are returned
  EXPECT_EQ(iso->graph->outputs().size(), 5u);
  const std::vector<torch::jit::Node*> nodes = cuttable_nodes(*iso->graph);
  size_t isolated = 0;
  for (size_t i = 0; i < leaves.size(); ++i) {
    torch::jit::Value* input = iso->graph->inputs()[i];
    if (!leaves[i].reader) {
      EXPECT_EQ(input->uses().size(), 2u);  // x: read by sin and add
      continue;
    }
    ++isolated;
    ASSERT_EQ(input->uses().size(), 1u) << leaves[i].value;
    EXPECT_EQ(input->uses()[0].user, nodes.at(*leaves[i].reader)) << leaves[i].value;
    EXPECT_TRUE(at::equal(iso->values->at(i).toTensor(), refs.find(leaves[i].value)->toTensor())) << leaves[i].value;
  }
  EXPECT_EQ(isolated, 4u);  // a, b, c and d, each read by the node after it
  EXPECT_TRUE(at::allclose(iso->values->at(1).toTensor(), at::sin(x)));
}

// A node that writes its input in place (resnet's relu_ after a batch norm) gets a copy of its leaf:
// a leaf that requires grad cannot be written in place.
TEST(IsolatedNodes, AnInPlaceReaderGetsACopyOfItsLeaf) {
  Case c = case_from_ir(R"IR(graph(%x : Tensor):
  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::relu_(%a)
  %c : Tensor = aten::tanh(%b)
  return (%c)
)IR",
                        {at::tensor({0.5, -1.0})});
  std::vector<IsolatedInput> leaves;
  std::optional<Case> iso = with_every_node_isolated(c, compute_reference_values(c), leaves);
  ASSERT_TRUE(iso);
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (!leaves[i].reader || node_kinds(c).at(*leaves[i].reader) != "aten::relu_") continue;
    torch::jit::Value* input = iso->graph->inputs()[i];
    ASSERT_EQ(input->uses().size(), 1u);
    EXPECT_EQ(input->uses()[0].user->kind(), c10::aten::clone) << *iso->graph;
    return;
  }
  ADD_FAILURE() << "no leaf read by relu_: " << *iso->graph;
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

// A value a later node writes in place is kept as the node that made it left it, in memory as on
// disk: a cut fed from either gets the same value.
TEST(ReferenceValues, AValueWrittenInPlaceLaterIsKeptAsItWasMade) {
  testing::TempDir root;
  Case c = case_from_ir(R"IR(graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::add_(%a, %one, %one)
  %c : Tensor = aten::tanh(%b)
  return (%c)
)IR",
                        {at::tensor({0.5, -1.0})});
  const std::string a = cuttable_nodes(*c.graph).at(0)->output()->debugName();
  const at::Tensor made = at::sin(at::tensor({0.5, -1.0}));
  const ReferenceValues in_memory = compute_reference_values(c);
  const ReferenceValues offloaded = compute_reference_values(c, root.path(), /*memory_budget=*/0);
  ASSERT_TRUE(offloaded.offloaded());
  EXPECT_TRUE(at::allclose(in_memory.find(a)->toTensor(), made)) << in_memory.find(a)->toTensor();
  EXPECT_TRUE(at::allclose(offloaded.find(a)->toTensor(), made)) << offloaded.find(a)->toTensor();
}

TEST(ReferenceValues, StayInMemoryUpToTheBudgetAndGoToDiskBeyondIt) {
  testing::TempDir root;
  const at::Tensor x = at::randn({256});  // 1 KiB per value
  Case c = case_from_ir(chain_ir(8, {}), {x});
  const ReferenceValues all_in_memory = compute_reference_values(c);
  {
    const ReferenceValues split = compute_reference_values(c, root.path(), 3 * 1024);
    EXPECT_TRUE(split.offloaded());
    EXPECT_EQ(split.size(), all_in_memory.size());
    for (torch::jit::Node* node : cuttable_nodes(*c.graph)) {
      const std::string name = node->output()->debugName();
      ASSERT_TRUE(split.find(name)) << name;
      EXPECT_TRUE(at::equal(split.find(name)->toTensor(), all_in_memory.find(name)->toTensor())) << name;
    }
    EXPECT_FALSE(std::filesystem::is_empty(root.path()));
  }
  EXPECT_TRUE(std::filesystem::is_empty(root.path()));
  EXPECT_FALSE(compute_reference_values(c, root.path(), SIZE_MAX).offloaded());
}

TEST(InlineBlocks, ReplacesAnIfByTheBranchThatHoldsTheCulprit) {
  const char* ir = R"IR(graph(%x : Tensor, %flag : bool):
  %y : Tensor = prim::If(%flag)
    block0():
      %a : Tensor = aten::relu(%x)
      -> (%a)
    block1():
      %b : Tensor = aten::tanh(%x)
      -> (%b)
  return (%y)
)IR";
  PassHarness h(case_from_ir(ir, {at::randn({4}), true}), has_op("aten::relu"));
  EXPECT_TRUE(h.run(inline_blocks_pass));
  EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::relu"}));
}

TEST(RemoveOutputs, KeepsOnlyTheOutputThePredicateNeeds) {
  const char* ir = R"IR(graph(%x : Tensor):
  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::relu(%x)
  %c : Tensor = aten::tanh(%x)
  %d : Tensor = aten::cos(%x)
  return (%a, %b, %c, %d)
)IR";
  PassHarness h(case_from_ir(ir, {at::randn({4})}), has_op("aten::relu"));
  EXPECT_TRUE(h.run(remove_outputs_pass));
  EXPECT_EQ(h.state.graph->outputs().size(), 1u);
  EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::relu"}));
}

TEST(Dce, DeletesSideEffectingNodesTheFailureDoesNotNeed) {
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
  PassHarness h(case_from_ir(ir, {at::randn({4})}), has_op("aten::relu"));
  EXPECT_TRUE(h.run(dce_pass));
  EXPECT_EQ(node_kinds(h.state), (std::vector<std::string>{"aten::relu"}));
}

TEST(ConsolidateInputs, FoldsScalarsAndMergesEqualTensors) {
  const char* ir = R"IR(graph(%x : Tensor, %y : Tensor, %k : int, %j : int, %i : int):
  %a : Tensor = aten::add(%x, %y, %k)
  %b : Tensor = aten::add(%a, %x, %j)
  %c : Tensor = aten::add(%b, %y, %i)
  %d : Tensor = aten::relu(%c)
  return (%d)
)IR";
  const at::Tensor same = at::randn({3});
  PassHarness h(case_from_ir(ir, {same, same.clone(), int64_t{2}, int64_t{1}, int64_t{3}}), has_op("aten::relu"));
  EXPECT_TRUE(h.run(consolidate_inputs_pass));
  EXPECT_EQ(h.state.inputs.size(), 1u);
  EXPECT_LE(h.queries(), 1u + 2u);  // all scalars at once, then the merge
}

TEST(ConsolidateInputs, KeepsTheScalarThePredicateNeedsAsAnInput) {
  const char* ir = R"IR(graph(%x : Tensor, %k : int, %j : int, %i : int, %h : int):
  %a : Tensor = aten::add(%x, %x, %k)
  %b : Tensor = aten::add(%a, %x, %j)
  %c : Tensor = aten::add(%b, %x, %i)
  %d : Tensor = aten::add(%c, %x, %h)
  return (%d)
)IR";
  // Interesting while the last scalar is still an input (the second half, then each one).
  const auto needs_last_input = [](const Case& s) { return !s.inputs.empty() && s.inputs.back().name == "h"; };
  PassHarness h(case_from_ir(ir, {at::randn({3}), int64_t{2}, int64_t{1}, int64_t{3}, int64_t{4}}), needs_last_input);
  EXPECT_TRUE(h.run(consolidate_inputs_pass));
  ASSERT_EQ(h.state.inputs.size(), 2u);
  EXPECT_EQ(h.state.inputs[1].name, "h");
}

TEST(ShrinkInputs, HalvesTensorsWhileThePredicateHolds) {
  const char* ir = R"IR(graph(%x : Tensor):
  %y : Tensor = aten::neg(%x)
  return (%y)
)IR";
  PassHarness h(case_from_ir(ir, {at::rand({8, 6}) + 1}), some_output_negative);
  EXPECT_TRUE(h.run(shrink_inputs_pass));
  EXPECT_EQ(h.state.values->at(0).toTensor().numel(), 1);
  EXPECT_EQ(h.state.inputs[0].sizes, (std::vector<int64_t>{1, 1}));
}

// ---- the engine ---------------------------------------------------------------------------------

TEST(Engine, AnOriginalThatIsNotInterestingIsReported) {
  EXPECT_THROW(minify_with(case_from_ir(kChain, {at::randn({4})}), has_op("aten::mul")), NotFailingError);
}

TEST(Engine, InputsNothingReadsAreDroppedBeforeAnyPass) {
  const char* ir = R"IR(graph(%x : Tensor, %unused : Tensor):
  %y : Tensor = aten::relu(%x)
  return (%y)
)IR";
  size_t smallest_inputs_seen = 2;
  const MinifyResult r = minify_with(case_from_ir(ir, {at::randn({3}), at::randn({3})}), [&](const Case& s) {
    smallest_inputs_seen = std::min(smallest_inputs_seen, s.inputs.size());
    return has_op("aten::relu")(s);
  });
  EXPECT_EQ(r.minimized.inputs.size(), 1u);
  EXPECT_EQ(smallest_inputs_seen, 1u);  // even the sanity check saw the normalized state
}

TEST(Engine, EveryAcceptedStateIsStrictlySmaller) {
  RecordingObserver observer;
  minify_with(case_from_ir(chain_ir(40, {{13, "relu"}}), {at::randn({6})}), has_op("aten::relu"), 1, &observer);
  ASSERT_GE(observer.sizes.size(), 2u);
  for (size_t i = 1; i < observer.sizes.size(); ++i)
    EXPECT_LT(observer.sizes[i], observer.sizes[i - 1]) << "step " << i;
}

TEST(Engine, TheResultIsOneMinimal) {
  const auto both = [](const Case& s) { return has_op("aten::relu")(s) && has_op("aten::sigmoid")(s); };
  const MinifyResult r =
      minify_with(case_from_ir(chain_ir(30, {{5, "relu"}, {22, "sigmoid"}}), {at::randn({4})}), both);
  EXPECT_TRUE(r.one_minimal);
  EXPECT_EQ(node_kinds(r.minimized), (std::vector<std::string>{"aten::relu", "aten::sigmoid"}));
  // Checked here without the engine: no single node can become an input with the predicate kept.
  const ReferenceValues refs = compute_reference_values(r.minimized);
  for (size_t k = 0; k < cuttable_nodes(*r.minimized.graph).size(); ++k) {
    const std::optional<Case> cut = with_nodes_cut(r.minimized, {k}, refs);
    EXPECT_TRUE(!cut || !both(*cut)) << "node " << k << " could go";
  }
}

TEST(Engine, TheSameResultAndStepsForEveryParallelism) {
  const Case c = case_from_ir(chain_ir(60, {{17, "relu"}, {41, "sigmoid"}}), {at::randn({5})});
  const auto both = [](const Case& s) { return has_op("aten::relu")(s) && has_op("aten::sigmoid")(s); };
  const MinifyResult one = minify_with(c, both, 1);
  for (size_t jobs : {2, 3, 8}) {
    const MinifyResult many = minify_with(c, both, jobs);
    EXPECT_EQ(graph_to_ir(*many.minimized.graph), graph_to_ir(*one.minimized.graph)) << jobs;
    ASSERT_EQ(many.steps.size(), one.steps.size()) << jobs;
    for (size_t i = 0; i < one.steps.size(); ++i) {
      EXPECT_EQ(many.steps[i].pass, one.steps[i].pass) << jobs;
      EXPECT_EQ(many.steps[i].nodes_after, one.steps[i].nodes_after) << jobs;
    }
  }
}

TEST(Engine, ParallelSlotsAreDistinctAndBounded) {
  // The oracle hands each concurrent candidate its own slot below parallelism().
  class SlotChecker : public PredicateInterest {
   public:
    SlotChecker() : PredicateInterest(has_op("aten::relu"), 4) {}
    bool interesting(const Case& c, size_t slot) override {
      EXPECT_LT(slot, 4u);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        EXPECT_TRUE(busy_.insert(slot).second) << "slot " << slot << " used twice at once";
      }
      const bool answer = PredicateInterest::interesting(c, slot);
      std::lock_guard<std::mutex> lock(mutex_);
      busy_.erase(slot);
      return answer;
    }

   private:
    std::mutex mutex_;
    std::set<size_t> busy_;
  } checker;
  MinifyObserver quiet;
  const MinifyResult r =
      minify(case_from_ir(chain_ir(50, {{9, "relu"}}), {at::randn({4})}), MinifyOptions{}, checker, quiet);
  EXPECT_EQ(node_kinds(r.minimized), (std::vector<std::string>{"aten::relu"}));
}

// Queries for one culprit in a chain of N nodes: at most 2*ceil(log2 N) + 10 wherever it sits
// (10 to 16 for N = 256 today), the 1-minimal check included.
class OneCulpritQueries : public ::testing::TestWithParam<size_t> {};

TEST_P(OneCulpritQueries, GrowLogarithmically) {
  const size_t n = 256;
  const MinifyResult r =
      minify_with(case_from_ir(chain_ir(n, {{GetParam(), "relu"}}), {at::randn({4})}), has_op("aten::relu"));
  EXPECT_EQ(node_kinds(r.minimized), (std::vector<std::string>{"aten::relu"}));
  EXPECT_TRUE(r.one_minimal);
  RecordProperty("queries", static_cast<int>(r.stats.queries));
  EXPECT_LE(r.stats.queries, 2 * static_cast<size_t>(std::ceil(std::log2(n))) + 10) << "culprit at " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Positions, OneCulpritQueries, ::testing::Values(0, 1, 100, 128, 254, 255));

// The same bound when the culprit sits inside a block: 100 tanh nodes, a prim::If or prim::Loop
// whose body is 40 nodes with the relu in its middle, 100 more tanh nodes.
std::string culprit_in_block_ir(const std::string& block_kind) {
  auto chain = [](const std::string& from, const std::string& prefix, size_t n, std::optional<size_t> relu_at) {
    const std::string indent = relu_at ? "      " : "  ";  // the culprit's chain is a block body
    std::string ir;
    std::string last = from;
    for (size_t i = 0; i < n; ++i) {
      const std::string next = prefix + std::to_string(i);
      ir += indent + "%" + next + " : Tensor = aten::" + (relu_at == i ? "relu" : "tanh") + "(%" + last + ")\n";
      last = next;
    }
    return std::make_pair(ir, last);
  };
  std::string ir = "graph(%x : Tensor, %flag : bool, %trips : int):\n";
  auto [before, head] = chain("x", "a", 100, std::nullopt);
  auto [body, body_out] = chain(block_kind == "If" ? head : "acc", "b", 40, 20);
  ir += before;
  if (block_kind == "If") {
    ir += "  %mid : Tensor = prim::If(%flag)\n    block0():\n" + body + "      -> (%" + body_out + ")\n" +
          "    block1():\n      -> (%" + head + ")\n";
  } else {
    ir += "  %mid : Tensor = prim::Loop(%trips, %flag, %" + head + ")\n    block0(%i : int, %acc : Tensor):\n" + body +
          "      -> (%flag, %" + body_out + ")\n";
  }
  auto [after, tail] = chain("mid", "c", 100, std::nullopt);
  return ir + after + "  return (%" + tail + ")\n";
}

class CulpritInABlockQueries : public ::testing::TestWithParam<std::string> {};

TEST_P(CulpritInABlockQueries, GrowLogarithmically) {
  const Case c = case_from_ir(culprit_in_block_ir(GetParam()), {at::randn({4}), true, int64_t{2}});
  const size_t n = count_compute_nodes(*c.graph);
  ASSERT_GE(n, 240u);
  const MinifyResult r = minify_with(c, has_op("aten::relu"));
  EXPECT_EQ(node_kinds(r.minimized), (std::vector<std::string>{"aten::relu"}));
  RecordProperty("queries", static_cast<int>(r.stats.queries));
  EXPECT_LE(r.stats.queries, 2 * static_cast<size_t>(std::ceil(std::log2(n))) + 10) << "culprit in a " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Blocks, CulpritInABlockQueries, ::testing::Values("If", "Loop"));

TEST(Engine, RunsOnlyThePassesNamedAndRefusesUnknownOnes) {
  MinifyObserver quiet;
  PredicateInterest interest(has_op("aten::relu"));
  MinifyOptions options;
  options.passes = {"truncate-suffix"};
  const MinifyResult r = minify(case_from_ir(chain_ir(20, {{5, "relu"}}), {at::randn({4})}), options, interest, quiet);
  ASSERT_FALSE(r.steps.empty());
  for (const AcceptedStep& step : r.steps)
    EXPECT_TRUE(step.pass == "truncate-suffix" || step.pass == "one-minimal-check");
  options.passes = {"truncate-suffix", "no-such-pass"};
  try {
    minify(case_from_ir(kChain, {at::randn({4})}), options, interest, quiet);
    ADD_FAILURE() << "an unknown pass was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-pass"), std::string::npos) << e.what();
  }
}

TEST(Engine, RepeatedCandidatesAreAnsweredFromTheCache) {
  std::atomic<size_t> calls{0};
  const MinifyResult r = minify_with(case_from_ir(kChain, {at::randn({4})}), [&](const Case& s) {
    ++calls;
    return has_op("aten::relu")(s);
  });
  EXPECT_EQ(calls.load(), r.stats.queries);  // every query reached the predicate once
}

// The outcome cache: a candidate asked again is answered without a query, and so is the same
// graph under other value names (two passes reach one graph so: bisect-window's window and
// truncate-suffix's prefix); another constant is another graph.
TEST(Engine, TheSameGraphUnderOtherNamesIsAnsweredFromTheCache) {
  const auto relu_then = [](const char* a, const char* b, int64_t constant) {
    return "graph(%" + std::string(a) + " : Tensor):\n  %k : int = prim::Constant[value=" +
           std::to_string(constant) + "]()\n  %" + b + " : Tensor = aten::relu(%" + a + ")\n  %out : Tensor = aten::add(%" +
           b + ", %" + a + ", %k)\n  return (%out)\n";
  };
  const at::Tensor x = at::randn({4});
  PassHarness h(case_from_ir(relu_then("x", "y", 1), {x}), has_op("aten::relu"));
  const size_t after_sanity = h.queries();
  EXPECT_TRUE(h.ctx.is_interesting(case_from_ir(relu_then("x", "y", 1), {x})));
  EXPECT_TRUE(h.ctx.is_interesting(case_from_ir(relu_then("input", "r", 1), {x})));
  EXPECT_EQ(h.queries() - after_sanity, 1u);
  EXPECT_EQ(h.oracle.stats().cache_hits, 1u);
  EXPECT_TRUE(h.ctx.is_interesting(case_from_ir(relu_then("x", "y", 2), {x})));
  EXPECT_EQ(h.queries() - after_sanity, 2u);
}

// The outcome store (MinifyOptions::outcomes_file): a second minify judged the same way asks the
// predicate nothing but its sanity run; one judged otherwise starts the store anew; a line a kill
// cut short is ignored.
TEST(Engine, ARunJudgedTheSameWayAnswersFromTheStoredOutcomes) {
  testing::TempDir dir;
  const Case c = case_from_ir(kChain, {at::randn({4})});
  MinifyOptions options;
  options.outcomes_file = dir / "outcomes.tsv";
  auto minify_counting = [&](const MinifyOptions& o, size_t& calls) {
    MinifyObserver quiet;
    PredicateInterest interest(
        [&](const Case& s) {
          ++calls;
          return has_op("aten::relu")(s);
        },
        1);
    return minify(c, o, interest, quiet);
  };
  size_t first_calls = 0, second_calls = 0, other_calls = 0, cut_calls = 0;
  const MinifyResult first = minify_counting(options, first_calls);
  ASSERT_GT(first.stats.queries, 3u);
  EXPECT_EQ(first.stats.stored_outcomes, 0u);

  const MinifyResult second = minify_counting(options, second_calls);
  EXPECT_EQ(second_calls, 1u) << "only the sanity run, which is never cached";
  EXPECT_EQ(second.stats.queries, 1u);
  EXPECT_GT(second.stats.stored_outcomes, 3u);
  EXPECT_EQ(graph_to_ir(*second.minimized.graph), graph_to_ir(*first.minimized.graph));

  MinifyOptions judged_otherwise = options;
  judged_otherwise.run.seed = options.run.seed + 1;
  const MinifyResult other = minify_counting(judged_otherwise, other_calls);
  EXPECT_EQ(other_calls, first_calls);
  EXPECT_EQ(other.stats.stored_outcomes, 0u);

  // The store now holds the seed+1 run's outcomes; cut its last line short as a kill would.
  std::string text = testing::read_text(options.outcomes_file);
  ASSERT_GT(text.size(), 4u);
  text.resize(text.size() - 3);
  std::ofstream(options.outcomes_file, std::ios::trunc) << text;
  const MinifyResult cut = minify_counting(judged_otherwise, cut_calls);
  EXPECT_EQ(cut_calls, 2u) << "the sanity run and the one candidate whose line was cut";
  EXPECT_EQ(cut.stats.stored_outcomes, other.stats.queries - 2);  // all but the sanity run and the cut one
  const std::string after = testing::read_text(options.outcomes_file);
  EXPECT_EQ(after.find(text + "\n"), 0u) << "the cut line is ended before new outcomes are appended";
}

}  // namespace
}  // namespace tsrepro
