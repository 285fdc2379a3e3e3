#pragma once
// What differs between the libtorch versions tsrepro supports (docs/ARCHITECTURE.md, "Supported
// libtorch"): Debian 12's 1.13.1 and Debian 13's 2.6.0, and the PyTorch wheels of those lines.
// Every difference is said here once. So far none is in the API: the same sources compile against
// both (a version macro from torch/version.h goes here when one is needed); what differs is how
// libtorch was built, which is asked at run time.

#include <stdexcept>

#include <torch/csrc/jit/tensorexpr/codegen.h>

namespace tsrepro {

// Whether this libtorch's NNC compiles CPU kernels with LLVM (Debian 13's does; Debian 12's has
// no LLVM and interprets them). Built without it, NNC must be told not to insist on LLVM
// (tensorexpr::getTEMustUseLLVMOnCPU() = false) or every fused group fails with "LLVM Backend not
// found"; built with it, NNC runs as users run it, with the default left alone. The build flag
// (TORCH_ENABLE_LLVM) is not in the installed headers: the codegen registry knows. Asked once per
// process (the answer cannot change, and without LLVM the lookup throws): backends ask around every
// compile and run.
inline bool nnc_has_llvm() {
  static const bool has_llvm = [] {
    try {
      torch::jit::tensorexpr::RegisterCodeGenList::GetInstance().FindStmtFactoryMethod("llvm_codegen");
      return true;
    } catch (const std::runtime_error&) {
      return false;
    }
  }();
  return has_llvm;
}

}  // namespace tsrepro
