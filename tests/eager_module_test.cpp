// The eager module form (backends/eager_module.h): the graph as plain PyTorch, the PyTorch 2
// backends' module route. What it prints for each kind of node, and, run by /usr/bin/python3 on
// either libtorch line, that it computes what TorchScript's interpreter computes on the graph.

#include <string>

#include <gtest/gtest.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/jit.h>
#include <torch/script.h>

#include "backends/eager_module.h"
#include <torch/csrc/jit/ir/irparser.h>

#include "tests/support/cases.h"

namespace tsrepro_test {
namespace {

using tsrepro::eager_module;
using tsrepro::EagerModule;

std::shared_ptr<torch::jit::Graph> graph_of(const std::string& source) {
  auto unit = torch::jit::compile(source);  // torch/jit.h
  auto graph = torch::jit::toGraphFunction(unit->get_function("forward")).graph()->copy();
  return graph;
}

// Branches, a loop, lists, a dict, a tuple, x.shape[-2:], a dtype test and a None default.
const char* const kConstructs = R"(
def forward(x: Tensor, n: int, bias: Optional[Tensor]):
    ys: List[Tensor] = []
    for i in range(n):
        ys.append(x * float(i + 1))
    d: Dict[str, Tensor] = {}
    d["first"] = ys[0]
    size = x.shape[-2:]
    if x.is_floating_point():
        y = torch.relu(x) + d["first"]
    else:
        y = x
    if bias is not None:
        y = y + bias
    k = 0
    while k < 3 and bool(y.sum() > -1000.0):
        k += 1
    pair = (y, size)
    return pair[0] * size[0], pair[1], len(ys) + k, 2 ** n
)";

TEST(EagerModule, WritesEachConstructAsPythonThatMeansTheSame) {
  const auto graph = graph_of(kConstructs);
  const EagerModule m = eager_module(*graph, std::vector<bool>(graph->inputs().size(), false));
  ASSERT_EQ(m.refused, "");
  const std::string& f = m.forward;
  EXPECT_NE(f.find("    def forward(self, x, n, bias):\n"), std::string::npos) << f;
  // The overload the graph bound, not one Python would pick by argument types.
  EXPECT_NE(f.find("torch.ops.aten.relu.default(x)"), std::string::npos) << f;
  EXPECT_NE(f.find(".append("), std::string::npos) << f;
  EXPECT_NE(f.find("[\"first\"] = "), std::string::npos) << f;
  EXPECT_NE(f.find("list(x.size())"), std::string::npos) << f;
  // A query answering with a bool or numbers is a Tensor method, which Dynamo traces (a torch.ops
  // call that returns no tensor breaks its graph).
  EXPECT_NE(f.find("x.is_floating_point()"), std::string::npos) << f;
  EXPECT_EQ(f.find("torch.ops.aten.is_floating_point"), std::string::npos) << f;
  EXPECT_NE(f.find(" is not None"), std::string::npos) << f;
  EXPECT_NE(f.find("for "), std::string::npos) << f;
  // TorchScript's while loop (trip count INT64_MAX) is a while loop: Dynamo would unpack the range.
  EXPECT_NE(f.find("while "), std::string::npos) << f;
  EXPECT_EQ(f.find("range(9223372036854775807)"), std::string::npos) << f;
  // Each outermost loop is a method of its own, so that a graph break in it leaves only its frame
  // to eager, not forward's.
  EXPECT_NE(f.find("    def loop_1(self, "), std::string::npos) << f;
  EXPECT_NE(f.find(" = self.loop_2("), std::string::npos) << f;
  EXPECT_NE(f.find("float(2) ** n"), std::string::npos) << f;  // aten::pow.int returns a float
  EXPECT_EQ(f.find("torch.jit"), std::string::npos) << f;
}

std::shared_ptr<torch::jit::Graph> graph_of_ir(const std::string& ir) {
  auto graph = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(ir, graph.get(), /*parse_tensor_constants=*/true);
  return graph;
}

// TorchScript's dtype is an int, eager PyTorch's a torch.dtype: compared, the int is written as one.
TEST(EagerModule, ADtypeComparedWithAnIntComparesDtypes) {
  const auto graph = graph_of_ir(R"IR(graph(%x : Tensor):
  %d : int = prim::dtype(%x)
  %c : int = prim::Constant[value=6]()
  %b : bool = aten::eq(%d, %c)
  return (%b))IR");
  const EagerModule m = eager_module(*graph, {false});
  ASSERT_EQ(m.refused, "");
  EXPECT_NE(m.forward.find(" == torch.float32"), std::string::npos) << m.forward;
}

TEST(EagerModule, LiftedInputsAndTensorConstantsAreAttributes) {
  const auto graph = graph_of_ir(R"IR(graph(%x : Tensor, %conv_weight : Tensor):
  %y : Tensor = aten::mul(%x, %x)
  %z : Tensor = aten::mul(%y, %conv_weight)
  return (%z))IR");
  torch::jit::Node* mul = graph->outputs()[0]->node()->inputs()[0]->node();
  torch::jit::WithInsertPoint before(mul);
  mul->replaceInput(1, graph->insertConstant(torch::full({2}, 2.5)));
  const EagerModule m = eager_module(*graph, {false, true});
  ASSERT_EQ(m.refused, "");
  ASSERT_EQ(m.attributes.size(), 2u);
  EXPECT_EQ(m.attributes[0].name, "conv_weight");
  EXPECT_EQ(m.attributes[0].input, std::optional<size_t>(1));
  EXPECT_FALSE(m.attributes[1].input.has_value());
  EXPECT_TRUE(m.attributes[1].constant.isTensor());
  EXPECT_NE(m.forward.find("self." + m.attributes[1].name), std::string::npos) << m.forward;
  EXPECT_NE(m.forward.find("self.conv_weight"), std::string::npos) << m.forward;
  EXPECT_EQ(m.forward_inputs, std::vector<size_t>({0}));
}

TEST(EagerModule, AnOpWithNoEagerSpellingIsRefusedByName) {
  const auto graph = graph_of("def forward(x: float) -> float:\n    return round(x)\n");
  const EagerModule m = eager_module(*graph, {false});
  EXPECT_NE(m.refused.find("aten::round"), std::string::npos) << m.refused << "\n" << m.forward;
  EXPECT_EQ(m.forward, "");
}

// The printed module, run as plain Python, against the graph in TorchScript's interpreter.
TEST(EagerModule, RunAsPythonItComputesWhatTheInterpreterComputes) {
  SKIP_WITHOUT_PYTHON_TORCH();
  const auto graph = graph_of(kConstructs);
  const EagerModule m = eager_module(*graph, std::vector<bool>(graph->inputs().size(), false));
  ASSERT_EQ(m.refused, "");
  TempDir dir;
  write_text(dir / "model.py", tsrepro::eager_module_file(m));
  write_text(dir / "source.py", kConstructs);
  write_text(dir / "check.py", R"PY(
import importlib.util, sys
import torch

spec = importlib.util.spec_from_file_location("model", sys.argv[1])
model = importlib.util.module_from_spec(spec)
spec.loader.exec_module(model)
interpreted = torch.jit.CompilationUnit(open(sys.argv[2]).read()).forward  # the same source, scripted


def leaves(v):
    return [x for i in v for x in (leaves(i) if isinstance(i, (list, tuple)) else [i])]


torch.manual_seed(0)
for args in [(torch.randn(2, 3, 4), 3, None), (torch.randn(2, 3, 4), 2, torch.randn(4)),
             (torch.randint(0, 5, (3, 4)), 1, None)]:
    with torch.jit.optimized_execution(False):
        ref = leaves([interpreted(*args)])
    res = leaves([model.Repro()(*args)])
    assert len(ref) == len(res), (ref, res)
    for a, b in zip(ref, res):
        same = torch.equal(a, b) if torch.is_tensor(a) else type(a) == type(b) and a == b
        assert same, (args[1:], a, b)
print("agree")
)PY");
  const Result r = run_cmd(kPython, {dir / "check.py", dir / "model.py", dir / "source.py"}, {"", 120});
  EXPECT_EQ(r.exit_code, 0) << r.describe() << "\n" << tsrepro::eager_module_file(m);
  EXPECT_NE(r.out.find("agree"), std::string::npos) << r.describe();
}

}  // namespace
}  // namespace tsrepro_test
