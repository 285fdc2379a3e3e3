// The minifier without processes: the engine's guarantees and what the passes share (graph edits,
// reference values), with the interest question answered by a predicate in this process (as
// PyTorch tests fx_minifier with has_mul). Each pass's own tests are tests/passes/<pass>_test.cpp;
// tests/minifier_test.cpp keeps the end-to-end runs through real workers.

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
#include "runner/graph/written_inputs.h"
#include "tsrepro/backend.h"
#include "tests/passes/pass_harness.h"
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
using testing::minify_with;
using testing::node_kinds;
using testing::PassHarness;
using testing::RecordingObserver;

// ---- what the passes share -----------------------------------------------------------------------

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
  EXPECT_EQ(node_kinds(c), (std::vector<std::string>{"aten::conv2d", "prim::ListConstruct", "aten::append", "aten::len",
                                                     "aten::add"}));
}

// On 3 nodes the searching passes ask nothing: the engine's 1-minimality check cuts each node alone,
// which is the whole search there. On kChain's 5 they search.
TEST(SearchingPasses, LeaveAStateOfThreeNodesToTheOneMinimalCheck) {
  const char* three =
      "graph(%x : Tensor):\n  %a : Tensor = aten::sin(%x)\n  %b : Tensor = aten::relu(%a)\n"
      "  %c : Tensor = aten::tanh(%b)\n  return (%c)\n";
  for (PassFunction pass : {bisect_window_pass, truncate_suffix_pass, cut_ranges_pass, cut_nodes_pass}) {
    PassHarness h(case_from_ir(three, {at::randn({4})}), has_op("aten::relu"));
    EXPECT_FALSE(h.run(pass));
    EXPECT_EQ(h.queries(), 1u);  // the sanity run only
    EXPECT_EQ(h.ctx.skip_reason(), kFewNodesSkip);
  }
  PassHarness four(case_from_ir(kChain, {at::randn({4})}), has_op("aten::relu"));
  EXPECT_TRUE(four.run(cut_nodes_pass));
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

// A list two nodes append to after the node that made it (FPN's results; IntermediateLayerGetter's
// dict is the same with _set_item).
constexpr const char* kListWrittenTwice = R"IR(graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %a : Tensor = aten::sin(%x)
  %list : Tensor[] = prim::ListConstruct(%a)
  %b : Tensor = aten::cos(%x)
  %l1 : Tensor[] = aten::append(%list, %b)
  %c : Tensor = aten::tanh(%x)
  %l2 : Tensor[] = aten::append(%list, %c)
  %out : Tensor = aten::cat(%list, %zero)
  return (%out)
)IR";

// It is recorded as it stood after its own node and after each writer, in memory as on disk: what
// a cut that removes the node and the first writers feeds in.
TEST(ReferenceValues, AContainerIsRecordedAsItStoodAfterEachWriter) {
  testing::TempDir root;
  const at::Tensor x = at::tensor({0.5, -1.0});
  const Case c = case_from_ir(kListWrittenTwice, {x});
  const std::vector<at::Tensor> after_each = {at::sin(x), at::cos(x), at::tanh(x)};
  const std::string list_name = cuttable_nodes(*c.graph).at(1)->output()->debugName();
  for (const ReferenceValues& refs : {compute_reference_values(c), compute_reference_values(c, root.path(), 0)}) {
    ASSERT_EQ(refs.writers(list_name), 2u) << list_name;
    for (size_t k = 0; k <= 2; ++k) {
      const std::optional<c10::IValue> list = refs.find_after_writers(list_name, k);
      ASSERT_TRUE(list && list->isTensorList()) << k;
      ASSERT_EQ(list->toTensorList().size(), k + 1) << k;
      for (size_t i = 0; i <= k; ++i) EXPECT_TRUE(at::allclose(list->toTensorList().get(i), after_each[i])) << k;
    }
    EXPECT_EQ(refs.find(list_name)->toTensorList().size(), 3u);  // the last writer's, under its own name
  }
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

// A cut that removes the list's node and its first writer feeds the list as it stood after them;
// the writer it keeps appends to that input (a fresh copy per run: the input counts as written),
// and the graph computes what it computed. A cut that keeps an earlier writer than one it removes
// cannot feed the list.
TEST(Cut, FeedsAContainerAsItStoodAfterTheWritersItRemoves) {
  const at::Tensor x = at::tensor({0.5, -1.0});
  const Case c = case_from_ir(kListWrittenTwice, {x});
  const ReferenceValues refs = compute_reference_values(c);
  const std::optional<Case> cut = with_nodes_cut(c, {0, 1, 2, 3}, refs);  // sin, the list, cos, the first append
  ASSERT_TRUE(cut);
  EXPECT_EQ(node_kinds(*cut), (std::vector<std::string>{"aten::tanh", "aten::append", "aten::cat"}));
  size_t list_input = cut->values->size();
  for (size_t i = 0; i < cut->values->size(); ++i)
    if (cut->values->at(i).isTensorList()) list_input = i;
  ASSERT_LT(list_input, cut->values->size());
  EXPECT_EQ(cut->values->at(list_input).toTensorList().size(), 2u);
  EXPECT_TRUE(inputs_maybe_written(*cut->graph).at(list_input));
  const auto run = [](const Case& k) {  // as a worker runs it: written inputs copied per run
    torch::jit::GraphExecutor executor(k.graph->copy(), "cut");
    torch::jit::Stack stack = fresh_copies(*k.values, inputs_maybe_written(*k.graph));
    executor.run(stack);
    return stack.at(0).toTensor();
  };
  EXPECT_TRUE(at::equal(run(*cut), run(c)));
  EXPECT_TRUE(at::equal(run(*cut), run(c)));         // the first run did not grow the case's own list
  EXPECT_FALSE(with_nodes_cut(c, {1, 4, 5}, refs));  // the list and the second append, not the first
}

// A dict the model makes empty stays made by its own node while the writer that fills it stays:
// fed in, an empty dict is another program to a compiler (PyTorch 2's export converter refuses
// one as an input). Cut alone, that node changes nothing: no candidate. A window (which folds)
// keeps it the same way.
TEST(Cut, KeepsTheNodeThatMakesAnEmptyContainerWithItsFirstWriter) {
  const char* filled = R"IR(graph(%x : Tensor):
  %key : str = prim::Constant[value="out"]()
  %d : Dict(str, Tensor) = aten::dict()
  %a : Tensor = aten::sin(%x)
  aten::_set_item(%d, %key, %a)
  return (%d)
)IR";
  Case c = case_from_ir(filled, {at::tensor({0.5, -1.0})});
  for (size_t i = 0; i < 3; ++i) set_origin_index(*cuttable_nodes(*c.graph)[i], static_cast<int64_t>(i));
  const ReferenceValues refs = compute_reference_values(c);
  const std::vector<std::string> made_and_filled = {"aten::dict", "aten::_set_item"};
  const std::optional<Case> cut = with_nodes_cut(c, {0, 1}, refs);  // the dict's node and sin
  ASSERT_TRUE(cut);
  EXPECT_EQ(node_kinds(*cut), made_and_filled);
  ASSERT_EQ(cut->graph->inputs().size(), 1u);  // sin's value, no dict
  EXPECT_TRUE(cut->graph->inputs()[0]->type()->isSubtypeOf(*c10::TensorType::get()));
  EXPECT_FALSE(with_nodes_cut(c, {0}, refs));
  const std::optional<Case> window = graph_from_folding(c, 2, refs);
  ASSERT_TRUE(window);
  EXPECT_EQ(node_kinds(*window), made_and_filled);
  // Its writer cut too, the dict is fed as the writer left it.
  const std::optional<Case> both = with_nodes_cut(c, {0, 2}, refs);
  ASSERT_TRUE(both);
  ASSERT_EQ(both->values->size(), 1u);
  EXPECT_EQ(both->values->at(0).toGenericDict().size(), 1u);
}

// Kept with its first writer in the window, an empty list keeps no node before the window that only
// reads it: that node goes and its value is fed (fcos's cat of the boxes a loop appended, kept, put
// the culprit into every window after it).
TEST(Cut, AWindowKeepsNoNodeBeforeItThatOnlyReadsAKeptEmptyContainer) {
  const char* ir = R"IR(graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %l : Tensor[] = prim::ListConstruct()
  %n : int = aten::len(%l)
  %a : Tensor = aten::sin(%x)
  %l1 : Tensor[] = aten::append(%l, %a)
  %c : Tensor = aten::cat(%l, %zero)
  %y : Tensor = aten::mul(%c, %n)
  return (%y)
)IR";
  Case c = case_from_ir(ir, {at::tensor({0.5, -1.0})});
  const std::vector<torch::jit::Node*> nodes = cuttable_nodes(*c.graph);
  for (size_t i = 0; i < nodes.size(); ++i) set_origin_index(*nodes[i], static_cast<int64_t>(i));
  const std::optional<Case> window = graph_from_folding(c, 2, compute_reference_values(c));  // from the sin on
  ASSERT_TRUE(window);
  EXPECT_EQ(node_kinds(*window),
            (std::vector<std::string>{"prim::ListConstruct", "aten::sin", "aten::append", "aten::cat", "aten::mul"}));
  ASSERT_EQ(window->values->size(), 2u);  // x and the len's value
  EXPECT_EQ(window->values->at(1).toInt(), 0);
}

// An input the cut feeds that a node only reads is not returned as well: both sides would return
// it as it came (ssd300's expand_as, returned with the anchors it reads, cost remove-outputs two
// queries). An input a node writes is returned: the write may be what the failure shows.
TEST(Cut, ReturnsNoInputItFedThatANodeOnlyReads) {
  const char* read = R"IR(graph(%x : Tensor):
  %a : Tensor = aten::sin(%x)
  %b : Tensor = aten::relu(%a)
  return (%b, %a)
)IR";
  const Case c = case_from_ir(read, {at::tensor({0.5, -1.0})});
  const std::optional<Case> cut = with_nodes_cut(c, {0}, compute_reference_values(c));
  ASSERT_TRUE(cut);
  EXPECT_EQ(cut->graph->outputs().size(), 1u);
  std::string written = read;
  written.replace(written.find("aten::relu"), 10, "aten::relu_");
  const Case w = case_from_ir(written, {at::tensor({0.5, -1.0})});
  const std::optional<Case> cut_w = with_nodes_cut(w, {0}, compute_reference_values(w));
  ASSERT_TRUE(cut_w);
  EXPECT_EQ(cut_w->graph->outputs().size(), 2u);
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

// A result of one node is 1-minimal without a query: its cut computes nothing (a compile under
// PyTorch 2 on every single-op minify). A predicate that holds on every graph still keeps the node.
TEST(Engine, OneNodeLeftCostsTheCheckNoQuery) {
  const MinifyResult r = minify_with(case_from_ir(chain_ir(8, {}), {at::randn({4})}), [](const Case&) { return true; });
  EXPECT_TRUE(r.one_minimal);
  EXPECT_EQ(cuttable_nodes(*r.minimized.graph).size(), 1u);
  const MinifyResult relu =
      minify_with(case_from_ir(chain_ir(8, {{5, "relu"}}), {at::randn({4})}), has_op("aten::relu"));
  EXPECT_EQ(node_kinds(relu.minimized), (std::vector<std::string>{"aten::relu"}));
  const MinifyResult again =
      minify_with(relu.minimized, has_op("aten::relu"));  // the one node, from the start: only the sanity run
  EXPECT_EQ(again.stats.queries, 1u);
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
    return "graph(%" + std::string(a) + " : Tensor):\n  %k : int = prim::Constant[value=" + std::to_string(constant) +
           "]()\n  %" + b + " : Tensor = aten::relu(%" + a + ")\n  %out : Tensor = aten::add(%" + b + ", %" + a +
           ", %k)\n  return (%out)\n";
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
