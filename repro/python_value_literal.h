#pragma once
// Input values written into a reproducer's source, exactly: a Python expression (it needs
// `torch` and `math` imported) whose value is the given value bit for bit. Real tensors are
// readable nested lists (NaN with its sign as -math.nan, inf as math.inf, -0.0 and subnormals by
// their shortest exact decimal); what a decimal cannot carry (a NaN with a payload, complex
// numbers) is the tensor's raw bytes in base64.

#include <string>

#include <ATen/core/ivalue.h>

namespace tsrepro {

// Tensors (any dtype the runner supports, strided or not, empty or 0-dim, on the CPU after
// the call), ints, floats, bools, None, strings, and tuples, lists and dicts of them. Throws
// UserError for anything else.
std::string python_value_literal(const c10::IValue& value);

}  // namespace tsrepro
