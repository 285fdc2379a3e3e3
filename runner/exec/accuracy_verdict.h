#pragma once
// How an accuracy failure becomes a verdict, in one place: the first failing output (outputs come
// before gradients) gives the phase, the signature and the message. The runner's evaluation
// (runner/exec/evaluate.cpp) and the TSREPRO_AFTER workflow's check (repro/after/accuracy_check.cpp)
// both judge with it, so that one failure reads the same wherever it is found.

#include <string>

#include "tsrepro/compare.h"
#include "tsrepro/verdict.h"

namespace tsrepro {

// Marks `verdict` as an accuracy failure when `comparison` found one; leaves it as it is when
// the outputs match. The verdict's outputs are the comparison's in either case.
void judge_accuracy(const CompareResult& comparison, Verdict& verdict);

// "output 0 (float32): max_abs 0.1, max_rel 0.4: allclose failed ..." for one output's diff.
std::string describe_diff(const OutputDiff& diff);

}  // namespace tsrepro
