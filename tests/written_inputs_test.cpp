// runner/written_inputs: which graph inputs a run may write to (those get a copy per run; the
// others, a model's parameters, are shared by all runs of a candidate).

#include "runner/graph/written_inputs.h"

#include <gtest/gtest.h>
#include <torch/script.h>

#include "tsrepro/case.h"

namespace tsrepro {
namespace {

std::vector<bool> written(const std::string& ir) { return inputs_maybe_written(*graph_from_ir(ir, "test graph")); }

TEST(WrittenInputs, ReadOnlyInputsAreNotWritten) {
  EXPECT_EQ(written(R"IR(graph(%x : Tensor, %w : Tensor, %n : int):
  %y : Tensor = aten::mul(%x, %w)
  %z : Tensor = aten::relu(%y)
  %minus_one : int = prim::Constant[value=-1]()
  %shape : int[] = prim::ListConstruct(%minus_one)
  %v : Tensor = aten::view(%w, %shape)
  return (%z, %v))IR"),
            (std::vector<bool>{false, false, false}));
}

TEST(WrittenInputs, InPlaceOpsOnAnInputOrAViewOfItWriteIt) {
  // %a directly, %b through a view, %c through the list that holds it, %d only read: as in a
  // batch norm's num_batches_tracked beside its read-only weight.
  EXPECT_EQ(written(R"IR(graph(%a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor):
  %one : int = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %a2 : Tensor = aten::add_(%a, %d, %one)
  %bv : Tensor = aten::select(%b, %zero, %zero)
  %b2 : Tensor = aten::relu_(%bv)
  %list : Tensor[] = prim::ListConstruct(%c)
  %c0 : Tensor = aten::__getitem__(%list, %zero)
  %c2 : Tensor = aten::mul_(%c0, %d)
  return (%a2, %b2, %c2))IR"),
            (std::vector<bool>{true, true, true, false}));
}

TEST(WrittenInputs, BatchNormWritesItsRunningStatisticsThoughItsSchemaDoesNotSaySo) {
  // Found by import --verify ofi on a training-mode conv+bn model: the reference's run updated
  // the running statistics the backend's run then read.
  EXPECT_EQ(written(R"IR(graph(%x : Tensor, %w : Tensor, %b : Tensor, %mean : Tensor, %var : Tensor):
  %training : bool = prim::Constant[value=1]()
  %momentum : float = prim::Constant[value=0.1]()
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %y : Tensor = aten::batch_norm(%x, %w, %b, %mean, %var, %training, %momentum, %eps, %training)
  return (%y))IR"),
            (std::vector<bool>{false, false, false, true, true}));
}

TEST(WrittenInputs, WritesInsideBlocksCount) {
  EXPECT_EQ(written(R"IR(graph(%flag : bool, %t : Tensor, %w : Tensor):
  %one : int = prim::Constant[value=1]()
  prim::If(%flag)
    block0():
      %u : Tensor = aten::add_(%t, %one, %one)
      -> ()
    block1():
      -> ()
  %y : Tensor = aten::mul(%w, %w)
  return (%y))IR"),
            (std::vector<bool>{false, true, false}));
}

}  // namespace
}  // namespace tsrepro
