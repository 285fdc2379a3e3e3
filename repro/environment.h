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

// What a PyTorch 2 repro.py names in its header, as after_aot's do: {"torch", "python",
// "compiler", "inductor_config": [after_aot's lines of the non-default torch._inductor.config
// values]}, from the Python the PyTorch 2 backends compile with (repro/templates/report/
// pytorch2_env.py). Asked once per process; null where that Python cannot say.
const nlohmann::json& pytorch2_environment();

}  // namespace tsrepro
