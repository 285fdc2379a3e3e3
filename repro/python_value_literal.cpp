// Exact Python literals of input values.

#include "repro/python_value_literal.h"

#include <cmath>
#include <sstream>

#include <ATen/ATen.h>

#include "runner/formats/python_literal.h"
#include "tsrepro/compare.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

std::string python_double(double value) {
  if (std::isnan(value)) return std::signbit(value) ? "-math.nan" : "math.nan";
  return python_float_literal(value);
}

std::string sizes_tuple(at::IntArrayRef sizes) {
  std::string text = "(";
  for (size_t d = 0; d < sizes.size(); ++d) text += (d ? ", " : "") + std::to_string(sizes[d]);
  return text + (sizes.size() == 1 ? ",)" : ")");
}

std::string torch_dtype(const at::Tensor& t) { return "torch." + dtype_name(t.scalar_type()); }

// The integer type of the same width, to compare floating-point values bit for bit.
c10::ScalarType same_width_integer(c10::ScalarType type) {
  switch (c10::elementSize(type)) {
    case 2:
      return at::kShort;
    case 4:
      return at::kInt;
    default:
      return at::kLong;
  }
}

// Whether every element reads back exactly from its decimal text: true for integers and bools,
// and for floating values whose NaNs are the quiet NaN Python makes (either sign).
bool decimal_text_is_exact(const at::Tensor& t) {
  if (t.is_complex()) return false;
  if (!t.is_floating_point()) return true;
  const at::Tensor nans = t.masked_select(at::isnan(t));
  if (nans.numel() == 0) return true;
  const at::Tensor quiet = at::full_like(nans, std::nan(""));
  const at::Tensor signed_quiet = at::where(at::signbit(nans), -quiet, quiet);
  const c10::ScalarType bits = same_width_integer(t.scalar_type());
  return at::equal(nans.view(bits), signed_quiet.view(bits));
}

// The elements of a contiguous tensor as nested lists, dimension by dimension.
void append_nested(std::ostringstream& out, const at::Tensor& t) {
  if (t.dim() == 0) {
    if (t.is_floating_point())
      out << python_double(t.item<double>());
    else if (t.scalar_type() == at::kBool)
      out << (t.item<bool>() ? "True" : "False");
    else
      out << t.item<int64_t>();
    return;
  }
  out << "[";
  for (int64_t i = 0; i < t.size(0); ++i) {
    if (i) out << ", ";
    append_nested(out, t[i]);
  }
  out << "]";
}

std::string base64(const uint8_t* data, size_t size) {
  static const char* const kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string text;
  for (size_t i = 0; i < size; i += 3) {
    const uint32_t chunk = (data[i] << 16) | (i + 1 < size ? data[i + 1] << 8 : 0) | (i + 2 < size ? data[i + 2] : 0);
    text += kAlphabet[(chunk >> 18) & 63];
    text += kAlphabet[(chunk >> 12) & 63];
    text += i + 1 < size ? kAlphabet[(chunk >> 6) & 63] : '=';
    text += i + 2 < size ? kAlphabet[chunk & 63] : '=';
  }
  return text;
}

std::string contiguous_tensor_literal(const at::Tensor& t) {
  std::ostringstream out;
  if (t.numel() == 0) {
    out << "torch.empty(" << sizes_tuple(t.sizes()) << ", dtype=" << torch_dtype(t) << ")";
  } else if (decimal_text_is_exact(t)) {
    out << "torch.tensor(";
    append_nested(out, t);
    out << ", dtype=" << torch_dtype(t) << ")";
  } else {
    // The raw bytes (little-endian, as this machine and torch.frombuffer read them).
    out << "torch.frombuffer(bytearray(__import__(\"base64\").b64decode(\""
        << base64(static_cast<const uint8_t*>(t.data_ptr()), t.numel() * t.element_size())
        << "\")), dtype=" << torch_dtype(t) << ").reshape(" << sizes_tuple(t.sizes()) << ")";
  }
  return out.str();
}

std::string tensor_literal(const at::Tensor& tensor) {
  const at::Tensor t = tensor.detach().to(at::kCPU);
  const std::string values = contiguous_tensor_literal(t.contiguous());
  if (t.is_contiguous()) return values;
  // Strides are part of what a backend sees: the same values in a tensor of the same layout.
  return "torch.empty_strided(" + sizes_tuple(t.sizes()) + ", " + sizes_tuple(t.strides()) +
         ", dtype=" + torch_dtype(t) + ").copy_(" + values + ")";
}

std::string sequence_literal(const std::vector<c10::IValue>& items, const char* open, const char* close) {
  std::string text = open;
  for (size_t i = 0; i < items.size(); ++i) text += (i ? ", " : "") + python_value_literal(items[i]);
  if (items.size() == 1 && std::string(open) == "(") text += ",";
  return text + close;
}

}  // namespace

std::string python_value_literal(const c10::IValue& v) {
  if (v.isTensor()) return tensor_literal(v.toTensor());
  if (v.isNone()) return "None";
  if (v.isBool()) return v.toBool() ? "True" : "False";
  if (v.isInt()) return std::to_string(v.toInt());
  if (v.isDouble()) return python_double(v.toDouble());
  if (v.isString()) return python_string_literal(v.toStringRef());
  if (v.isTuple()) return sequence_literal(v.toTupleRef().elements().vec(), "(", ")");
  if (v.isList()) return sequence_literal(v.toListRef().vec(), "[", "]");
  if (v.isGenericDict()) {  // in its order, as a Python dict keeps it
    std::string text = "{";
    for (const auto& entry : v.toGenericDict())
      text += (text.size() > 1 ? ", " : "") + python_value_literal(entry.key()) + ": " +
              python_value_literal(entry.value());
    return text + "}";
  }
  throw UserError("a value of type " + v.type()->str() + " cannot be written into a reproducer");
}

}  // namespace tsrepro
