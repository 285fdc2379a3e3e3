#pragma once
// What differs between the libtorch versions tsrepro supports (docs/ARCHITECTURE.md, "Supported
// libtorch"): Debian 12's 1.13.1 and Debian 13's 2.6.0, and the PyTorch wheels of those lines.
// Every difference is said here once, by version macro (torch/version.h) or, where the build of
// libtorch decides rather than its version, by a question asked at run time.

#include <stdexcept>

#include <torch/csrc/jit/tensorexpr/codegen.h>
#include <torch/version.h>

#define TSREPRO_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) || (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace tsrepro {

// Whether this libtorch's NNC compiles CPU kernels with LLVM (Debian 13's does; Debian 12's has
// no LLVM and interprets them). Built without it, NNC must be told not to insist on LLVM
// (tensorexpr::getTEMustUseLLVMOnCPU() = false) or every fused group fails with "LLVM Backend not
// found"; built with it, NNC runs as users run it, with the default left alone. The build flag
// (TORCH_ENABLE_LLVM) is not in the installed headers: the codegen registry knows.
inline bool nnc_has_llvm() {
  try {
    torch::jit::tensorexpr::RegisterCodeGenList::GetInstance().FindStmtFactoryMethod("llvm_codegen");
    return true;
  } catch (const std::runtime_error&) {
    return false;
  }
}

}  // namespace tsrepro
