#pragma once
// What a reproducer and an issue report say about a case in words: the issue title, the
// machine it was seen on. One place, so that repro.py, repro.cpp and ISSUE.md agree.

#include <string>
#include <vector>

#include "tsrepro/case.h"
#include "tsrepro/writer.h"

namespace tsrepro {

// /proc/cpuinfo's model name (or its equivalent on other architectures), else uname's machine.
std::string cpu_model_name();

// The ops a reader should look at: the distinct node kinds of the graph (nested blocks too),
// without constants and list/tuple plumbing, in order of first appearance.
std::vector<std::string> interesting_ops(const torch::jit::Graph& graph);

// A title in PyTorch's issue style: "[JIT][NNC] aten::frac returns wrong values under the
// TensorExpr fuser". The label and the backend's name come from backends/backends.def.
std::string issue_title(const Case& c, const ReproSettings& settings);

// "accuracy (accuracy:float32)", "any failure" when none was recorded.
std::string expected_failure_text(const ReproSettings& settings);

}  // namespace tsrepro
