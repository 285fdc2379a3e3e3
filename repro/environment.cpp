#include "repro/environment.h"

#include <sys/utsname.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <ATen/Version.h>
#include <torch/version.h>

#include "backends/pt2_program.h"
#include "process/child_process.h"
#include "repro/describe.h"
#include "repro/templates_report.h"  // generated from repro/templates/report/

namespace tsrepro {
namespace {

std::string os_name() {
  std::ifstream release("/etc/os-release");
  for (std::string line; std::getline(release, line);) {
    if (line.rfind("PRETTY_NAME=", 0) != 0) continue;
    std::string value = line.substr(12);
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    return value;
  }
  return "unknown";
}

// "BUILD_TYPE=Release, USE_CUDA=OFF, ..." : the settings of at::show_config() a bug report needs.
std::string libtorch_build_settings() {
  const std::string config = at::show_config();
  std::string picked;
  for (const char* key : {"BUILD_TYPE", "USE_CUDA", "USE_MKLDNN", "USE_OPENMP", "BLAS_INFO"}) {
    const std::string needle = std::string(key) + "=";
    const auto at = config.find(needle);
    if (at == std::string::npos) continue;
    const auto end = config.find_first_of(",\n", at);
    picked += (picked.empty() ? "" : ", ") + config.substr(at, end == std::string::npos ? end : end - at);
  }
  const auto capability = config.find("CPU capability usage: ");
  if (capability != std::string::npos) {
    const auto start = capability + 22;
    picked += (picked.empty() ? "" : ", ") + std::string("CPU capability ") +
              config.substr(start, config.find('\n', start) - start);
  }
  return picked.empty() ? "unknown" : picked;
}

std::string compiler() {
#if defined(__clang__)
  return std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  return std::string("GCC ") + __VERSION__;
#else
  return "unknown";
#endif
}

std::string fact_text(const nlohmann::json& facts, const std::string& key) {
  if (!facts.is_object() || !facts.contains(key) || facts[key].is_null()) return "unknown";
  const nlohmann::json& value = facts[key];
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "no";
  return value.is_string() ? value.get<std::string>() : value.dump();
}

}  // namespace

std::vector<EnvironmentFact> collect_environment(const nlohmann::json& python_facts) {
  struct utsname names {};
  const bool have_uname = uname(&names) == 0;
  const bool have_python = python_facts.is_object();
  std::vector<EnvironmentFact> facts = {
      {"tsrepro version", TSREPRO_VERSION},
      {"libtorch version (tsrepro)", TORCH_VERSION},
      {"libtorch build", libtorch_build_settings()},
      {"MKLDNN available (libtorch)", at::hasMKLDNN() ? "yes" : "no"},
      {"CUDA available (libtorch)", at::hasCUDA() ? "yes" : "no"},
      {"intra-op threads", std::to_string(at::get_num_threads())},
  };
  if (have_python) {
    facts.push_back({"PyTorch version (Python)", fact_text(python_facts, "torch")});
    facts.push_back({"Python version", fact_text(python_facts, "python")});
    facts.push_back({"Is debug build", fact_text(python_facts, "debug_build")});
    facts.push_back({"LLVM in NNC (torch._C._llvm_enabled)", fact_text(python_facts, "llvm_enabled")});
    facts.push_back({"CUDA available (Python)", fact_text(python_facts, "cuda_available")});
    if (python_facts.contains("gpu")) facts.push_back({"GPU", fact_text(python_facts, "gpu")});
  } else {
    facts.push_back({"PyTorch version (Python)", "no Python with torch found (set TSREPRO_PYTHON)"});
  }
  facts.push_back({"OS", os_name() + (have_uname ? std::string(" (") + names.machine + ")" : "")});
  if (have_uname) facts.push_back({"Kernel", names.release});
  facts.push_back(
      {"CPU", cpu_model_name() + ", " + std::to_string(std::thread::hardware_concurrency()) + " logical CPUs"});
  facts.push_back({"Compiler (tsrepro's build)", compiler()});
  return facts;
}

const char* python_environment_probe() { return templates::report_python_env; }

const nlohmann::json& pytorch2_environment() {
  static const nlohmann::json facts = [] {
    ChildSpec spec;
    spec.argv = {pt2_python_executable(), "-c", templates::report_pytorch2_env};
    spec.out = Stream::pipe();
    spec.err = Stream::null();
    const ChildRun run = run_child(spec, std::chrono::seconds(120));
    if (!run.exited_with(0)) return nlohmann::json();
    try {
      return nlohmann::json::parse(run.out.substr(run.out.rfind('{')));
    } catch (const std::exception&) {
      return nlohmann::json();
    }
  }();
  return facts;
}

}  // namespace tsrepro
