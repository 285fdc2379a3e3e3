#pragma once
// The tensors inside a value, nested tuples and lists included: visited, tested, their bytes
// counted. One walk, shared by the runner (input checks, module lifting) and the capture library
// (its size limit, its undefined-gradient check), which compiles this file too: torch alone.

#include <cstddef>
#include <functional>
#include <vector>

#include <ATen/core/ivalue.h>

namespace tsrepro {

// True when `test` holds for a tensor inside `value` (tuples and lists searched depth first).
bool any_tensor(const c10::IValue& value, const std::function<bool(const at::Tensor&)>& test);

// The bytes of tensor data in a value or in values (undefined tensors hold none).
size_t tensor_data_bytes(const c10::IValue& value);
size_t tensor_data_bytes(const std::vector<c10::IValue>& values);

}  // namespace tsrepro
