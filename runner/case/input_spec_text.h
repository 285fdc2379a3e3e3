#pragma once
// The text of --input-spec: fake-shaped inputs described on the command line.

#include <string>
#include <vector>

#include "tsrepro/case.h"

namespace tsrepro {

// Parses --input-spec. Items: SIZES:DTYPE[RANGE] for tensors ("2x3:float32", "4:int64[0,10)",
// "scalar:float64"), or int=V, float=V, bool=V for scalars. Throws UserError("--input-spec: ...").
std::vector<InputSpec> parse_input_spec(const std::string& text);

}  // namespace tsrepro
