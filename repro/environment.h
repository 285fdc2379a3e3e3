#pragma once
// The environment a failure was seen in, as `python -m torch.utils.collect_env` reports it for
// a PyTorch issue: versions, build flags (MKLDNN, OpenMP, CUDA, LLVM for NNC), OS, CPU, compiler.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tsrepro {

struct EnvironmentFact {
  std::string name;
  std::string value;
};

// tsrepro's own libtorch and machine, plus what the Python that runs repro.py says about its
// PyTorch (`python_facts`: what repro/templates/report/python_env.py prints; null when no
// Python with torch was found).
std::vector<EnvironmentFact> collect_environment(const nlohmann::json& python_facts);

// The Python script that prints those facts as one JSON object (repro/templates/report/python_env.py).
const char* python_environment_probe();

}  // namespace tsrepro
