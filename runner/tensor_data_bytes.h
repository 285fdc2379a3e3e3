#pragma once
// How much tensor data values hold: the rule the runner's input checks and the capture's size
// limit (TSREPRO_CAPTURE_MAX_BYTES) share. Torch alone, so the capture library compiles it too.

#include <cstddef>
#include <vector>

#include <ATen/core/ivalue.h>

namespace tsrepro {

// The bytes of tensor data in a value or in values, nested tuples and lists included.
size_t tensor_data_bytes(const c10::IValue& value);
size_t tensor_data_bytes(const std::vector<c10::IValue>& values);

}  // namespace tsrepro
