#include "runner/exec/accuracy_verdict.h"

#include <sstream>

#include "runner/exec/evaluate.h"  // kGradientPath

namespace tsrepro {

void judge_accuracy(const CompareResult& comparison, Verdict& verdict) {
  verdict.outputs = comparison.outputs;
  const OutputDiff* worst = comparison.first_failure();
  if (!worst) return;
  verdict.status = Status::Accuracy;
  // A gradient as the first failure means the forward agreed.
  verdict.phase = worst->path.rfind(kGradientPath, 0) == 0 ? Phase::Backward : Phase::Run;
  verdict.signature = accuracy_signature(worst->dtype, verdict.phase);
  verdict.message = describe_diff(*worst);
}

std::string describe_diff(const OutputDiff& d) {
  std::ostringstream text;
  text << "output " << d.path << " (" << d.dtype << "): max_abs " << d.max_abs << ", max_rel " << d.max_rel;
  if (d.nonfinite_mismatches > 0) text << ", " << d.nonfinite_mismatches << " inf/NaN elements differ";
  if (!d.reason.empty()) text << ": " << d.reason;
  return text.str();
}

}  // namespace tsrepro
