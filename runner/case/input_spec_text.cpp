// parse_input_spec: --input-spec text ("1x3x8x8:float32,4:int64[0,10),int=3") into InputSpecs.

#include "runner/case/input_spec_text.h"

#include <cctype>
#include <cmath>
#include <string>
#include <vector>

#include <ATen/core/jit_type.h>

#include "runner/case/inputs.h"
#include "tsrepro/error.h"

namespace tsrepro {
namespace {

std::vector<std::string> split_top_level(const std::string& text) {
  std::vector<std::string> items;
  std::string current;
  int depth = 0;
  for (char ch : text) {
    if (ch == '[' || ch == '(') ++depth;
    if (ch == ']' || ch == ')') --depth;
    if (ch == ',' && depth == 0) {
      items.push_back(current);
      current.clear();
    } else if (!std::isspace(static_cast<unsigned char>(ch))) {
      current += ch;
    }
  }
  if (!current.empty()) items.push_back(current);
  return items;
}

InputSpec parse_scalar_item(const std::string& item) {
  const auto eq = item.find('=');
  const std::string kind = item.substr(0, eq), text = item.substr(eq + 1);
  InputSpec spec;
  spec.kind = kind;
  try {
    if (kind == "int")
      spec.value = std::stoll(text);
    else if (kind == "float")
      spec.value = std::stod(text);
    else if (kind == "bool" && (text == "true" || text == "false"))
      spec.value = text == "true";
    else
      throw std::invalid_argument(kind);
  } catch (const std::exception&) {
    throw UserError("--input-spec: cannot read '" + item + "' (scalars are int=V, float=V, bool=true|false)");
  }
  return spec;
}

InputSpec parse_tensor_item(const std::string& item) {
  const auto colon = item.find(':');
  if (colon == std::string::npos)
    throw UserError("--input-spec: '" + item + "' needs SIZES:DTYPE, e.g. 2x3:float32 or 4:int64[0,10)");
  InputSpec spec;
  spec.kind = "tensor";
  const std::string sizes = item.substr(0, colon);
  std::string rest = item.substr(colon + 1);
  const auto bracket = rest.find('[');
  const std::string dtype = rest.substr(0, bracket);
  spec.dtype = dtype_name(scalar_type_from_name(dtype, "--input-spec"));
  if (sizes != "scalar") {
    std::stringstream dims(sizes);
    std::string dim;
    while (std::getline(dims, dim, 'x')) {
      try {
        spec.sizes.push_back(std::stoll(dim));
      } catch (const std::exception&) {
        throw UserError("--input-spec: bad size '" + dim + "' in '" + item + "'");
      }
    }
  }
  const auto strides = c10::contiguous_strides(spec.sizes);
  spec.strides.assign(strides.begin(), strides.end());
  if (bracket != std::string::npos) {
    const std::string range = rest.substr(bracket);  // "[lo,hi)" or "[lo,hi]"
    const auto comma = range.find(',');
    const bool closed = !range.empty() && range.back() == ']';
    if (comma == std::string::npos || (range.back() != ')' && !closed))
      throw UserError("--input-spec: bad range '" + range + "' (write [lo,hi) or [lo,hi])");
    try {
      spec.min = std::stod(range.substr(1, comma - 1));
      spec.max = std::stod(range.substr(comma + 1, range.size() - comma - 2));
    } catch (const std::exception&) {
      throw UserError("--input-spec: bad range '" + range + "'");
    }
    // std::stod reads "nan" and "inf": a range must have finite ends to draw values from.
    if (!std::isfinite(*spec.min) || !std::isfinite(*spec.max))
      throw UserError("--input-spec: range '" + range + "' must have finite ends");
    const bool integral =
        spec.dtype != "float32" && spec.dtype != "float64" && spec.dtype != "float16" && spec.dtype != "bfloat16";
    if (!closed && integral) *spec.max -= 1;  // [0,10) for ints means 0..9
    if (*spec.max < *spec.min || (!integral && !closed && *spec.max == *spec.min))
      throw UserError("--input-spec: range '" + range + "' holds no value");
  }
  return spec;
}

}  // namespace

std::vector<InputSpec> parse_input_spec(const std::string& text) {
  std::vector<InputSpec> specs;
  for (const std::string& item : split_top_level(text))
    specs.push_back(item.find('=') != std::string::npos ? parse_scalar_item(item) : parse_tensor_item(item));
  return specs;
}

}  // namespace tsrepro
