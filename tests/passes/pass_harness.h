#pragma once
// One minifier pass run in this process on a case, the interest question answered by a predicate
// (as PyTorch tests fx_minifier with has_mul): what every tests/passes/<pass>_test.cpp uses. The
// passes are one file each under minifier/passes/, and so are their tests.

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <vector>

#include <torch/script.h>

#include "minifier/oracle.h"
#include "minifier/pass.h"
#include "tests/support/cases.h"
#include "tsrepro/node_origin.h"
#include "tsrepro/minify.h"

namespace tsrepro_test {

using tsrepro::AcceptedStep;
using tsrepro::count_compute_nodes;
using tsrepro::MinifyObserver;
using tsrepro::MinifyOptions;
using tsrepro::MinifyResult;
using tsrepro::Oracle;
using tsrepro::PassContext;
using tsrepro::PassFunction;
using tsrepro::PredicateInterest;
using tsrepro::Verdict;

// The order in which the engine's states must shrink (nodes, inputs, outputs, input elements).
inline std::tuple<size_t, size_t, size_t, int64_t> size_of(const Case& c) {
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
        ctx(oracle, state, observer, steps, "test") {
    oracle.check_original(state);
  }
  bool run(PassFunction pass) { return pass(ctx); }
  size_t queries() const { return oracle.stats().queries; }

  RecordingObserver observer;
  PredicateInterest interest;
  Oracle oracle;
  Case state;
  std::vector<AcceptedStep> steps;
  PassContext ctx;
};

inline MinifyResult minify_with(const Case& c, PredicateInterest::Predicate predicate, size_t parallelism = 1,
                                MinifyObserver* observer = nullptr) {
  MinifyObserver quiet;
  PredicateInterest interest(std::move(predicate), parallelism);
  return minify(c, MinifyOptions{}, interest, observer ? *observer : quiet);
}

// The interpreter's own answer: is some output element negative? (A property of the values, so
// the passes that feed reference values in and shrink inputs are tested on real numbers.)
inline bool some_output_negative(const Case& c) {
  torch::jit::GraphExecutor executor(c.graph->copy(), "predicate");
  torch::jit::Stack stack(c.values->begin(), c.values->end());
  executor.run(stack);
  for (const c10::IValue& v : stack)
    if (v.isTensor() && v.toTensor().is_floating_point() && v.toTensor().lt(0).any().item<bool>()) return true;
  return false;
}

// The lines of a chain %x1 = op(%x0) .. %xn = op(%x(n-1)), op tanh but where `ops_at` names
// another, the IR lines `after[i]` following node i (they may name %x(i+1)): for a test that
// writes the graph's head and tail itself (chain_ir is a whole graph).
inline std::string chain_lines(size_t n, const std::map<size_t, std::string>& ops_at,
                               const std::map<size_t, std::string>& after = {}) {
  std::string lines;
  for (size_t i = 0; i < n; ++i) {
    const auto op = ops_at.find(i);
    lines += "  %x" + std::to_string(i + 1) + " : Tensor = aten::" + (op == ops_at.end() ? "tanh" : op->second) +
             "(%x" + std::to_string(i) + ")\n";
    if (const auto extra = after.find(i); extra != after.end()) lines += extra->second;
  }
  return lines;
}

// Blocks of two branches, x' = g(sin(x)) + cos(x), with a shape query on the second (an int the
// add reads as its alpha, 1 for these 1-d inputs): five positions each, a DAG like a real
// model's rather than a chain. g is tanh, or relu in the culprit's block (position 5 * block + 1).
inline std::string two_branch_ir(size_t blocks, size_t culprit_block) {
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

}  // namespace tsrepro_test

// The names every tests/passes/<pass>_test.cpp uses unqualified, said once here.
namespace tsrepro {
using tsrepro_test::case_from_ir;
using tsrepro_test::chain_ir;
using tsrepro_test::chain_lines;
using tsrepro_test::has_op;
using tsrepro_test::kChain;
using tsrepro_test::node_kinds;
using tsrepro_test::PassHarness;
using tsrepro_test::some_output_negative;
using tsrepro_test::two_branch_ir;
}  // namespace tsrepro
