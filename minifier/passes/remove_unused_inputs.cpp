// remove-unused-inputs: inputs nothing reads (an imported case can start with some).

#include <torch/script.h>

#include "minifier/pass.h"

namespace tsrepro {

bool remove_unused_inputs_pass(PassContext& ctx) {
  Case candidate = copy_case(ctx.state());
  if (!normalize(candidate)) return false;
  if (candidate.inputs.size() == ctx.state().inputs.size()) return false;
  return ctx.try_candidate(std::move(candidate));
}

}  // namespace tsrepro
