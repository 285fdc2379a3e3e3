// tensor_data_bytes.h

#include "runner/tensor_data_bytes.h"

namespace tsrepro {

size_t tensor_data_bytes(const c10::IValue& value) {
  if (value.isTensor()) return value.toTensor().defined() ? value.toTensor().nbytes() : 0;
  size_t total = 0;
  if (value.isTuple())
    for (const c10::IValue& item : value.toTupleRef().elements()) total += tensor_data_bytes(item);
  if (value.isList())
    for (const c10::IValue& item : value.toListRef()) total += tensor_data_bytes(item);
  return total;
}

size_t tensor_data_bytes(const std::vector<c10::IValue>& values) {
  size_t total = 0;
  for (const c10::IValue& value : values) total += tensor_data_bytes(value);
  return total;
}

}  // namespace tsrepro
