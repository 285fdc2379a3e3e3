// An ordinary libtorch program that knows nothing of tsrepro: it loads a TorchScript model and
// calls it a few times. libtsrepro_capture.so captures what it runs by environment alone
// (README, "Without touching the program"):
//
//   TSREPRO_AFTER=fusion TSREPRO_LEVEL=4 LD_PRELOAD=build/libtsrepro_capture.so
//       build/capture_plain_app model.pt inputs.pt [calls]       (one command line)
//
// Like a program that uses NNC on the CPU, it switches CPU fusion on itself (Debian's libtorch
// has no LLVM: NNC then interprets its kernels). One thread: with CPU fusion on, libtorch 1.13's
// NNC IR interpreter fails when two threads run kernels at once ("MALFORMED INPUT: could not find
// var_node", then SIGABRT or SIGSEGV), with or without tsrepro.

#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <vector>

#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>
#include <torch/script.h>

namespace torch::jit {  // from torch/csrc/jit/codegen/fuser/interface.h, which libtorch does not install
TORCH_API void overrideCanFuseOnCPU(bool value);
}  // namespace torch::jit

// inputs.pt: torch.save of a tuple of the forward arguments.
std::vector<c10::IValue> read_inputs(const char* path) {
  std::ifstream file(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return torch::jit::pickle_load(bytes).toTupleRef().elements().vec();
}

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: capture_plain_app model.pt inputs.pt [calls]\n";
    return 2;
  }
  const int calls = argc > 3 ? std::atoi(argv[3]) : 3;
  torch::jit::overrideCanFuseOnCPU(true);
  try {  // LLVM kernels where this libtorch has LLVM
    torch::jit::tensorexpr::RegisterCodeGenList::GetInstance().FindStmtFactoryMethod("llvm_codegen");
  } catch (const std::runtime_error&) {  // none (Debian 12's libtorch): NNC interprets its kernels
    torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = false;
  }
  torch::jit::Module module = torch::jit::load(argv[1]);
  module.eval();
  const std::vector<c10::IValue> inputs = read_inputs(argv[2]);
  torch::NoGradGuard no_grad;
  // The profiling executor's first two calls profile and compile; the rest is the steady state.
  auto steady_start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) {
    if (i == 2) steady_start = std::chrono::steady_clock::now();
    const c10::IValue out = module.forward(inputs);
    const at::Tensor first = out.isTuple() ? out.toTupleRef().elements()[0].toTensor() : out.toTensor();
    if (i < 3 || i + 1 == calls)
      std::cout << "call " << i << ": first output sum " << first.sum().item<double>() << "\n";
  }
  if (calls > 2)
    std::cout << "steady calls: " << calls - 2 << " in "
              << std::chrono::duration<double>(std::chrono::steady_clock::now() - steady_start).count() << " s\n";
  return 0;
}
