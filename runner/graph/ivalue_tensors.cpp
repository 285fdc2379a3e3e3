// ivalue_tensors.h

#include "runner/graph/ivalue_tensors.h"

namespace tsrepro {

bool any_tensor(const c10::IValue& value, const std::function<bool(const at::Tensor&)>& test) {
  if (value.isTensor()) return test(value.toTensor());
  if (value.isTuple())
    for (const c10::IValue& item : value.toTupleRef().elements())
      if (any_tensor(item, test)) return true;
  if (value.isList())
    for (const c10::IValue& item : value.toListRef())
      if (any_tensor(item, test)) return true;
  return false;
}

size_t tensor_data_bytes(const c10::IValue& value) {
  size_t total = 0;
  any_tensor(value, [&total](const at::Tensor& t) {
    if (t.defined()) total += t.nbytes();
    return false;  // visit them all
  });
  return total;
}

size_t tensor_data_bytes(const std::vector<c10::IValue>& values) {
  size_t total = 0;
  for (const c10::IValue& value : values) total += tensor_data_bytes(value);
  return total;
}

}  // namespace tsrepro
