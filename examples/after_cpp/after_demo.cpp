// A program whose model fails once compiled, and what TSREPRO_AFTER makes of it.
//
//   after_demo MODEL.pt INPUTS.pt BACKEND [CALLS]
//
// loads a TorchScript module, compiles it with tsrepro::compile(module, BACKEND) and calls it
// CALLS times (default 3) on the inputs. Without TSREPRO_* variables it only runs; with
// TSREPRO_AFTER=graph|fusion and TSREPRO_LEVEL=1..4 a failure leaves a case directory and a
// repro under TSREPRO_DIR (see README, "When your compiled TorchScript model fails").

#include <cstdlib>
#include <iostream>
#include <string>

#include <torch/script.h>
#include <tsrepro/after.h>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::cerr << "usage: after_demo MODEL.pt INPUTS.pt BACKEND [CALLS]\n";
    return 2;
  }
  const int calls = argc > 4 ? std::atoi(argv[4]) : 3;
  try {
    torch::jit::Module module = torch::jit::load(argv[1]);
    module.eval();
    const std::vector<c10::IValue> inputs = tsrepro::load_inputs(argv[2]);
    tsrepro::CompiledModule fn = tsrepro::compile(module, argv[3]);
    for (int i = 0; i < calls; ++i) {
      torch::NoGradGuard no_grad;
      const c10::IValue out = fn(inputs);
      const at::Tensor first = out.isTuple() ? out.toTupleRef().elements().at(0).toTensor() : out.toTensor();
      std::cout << "call " << i << ": first output sum " << first.to(at::kDouble).sum().item<double>() << "\n";
    }
  } catch (const std::exception& e) {
    const std::string what = e.what();
    std::cerr << "after_demo: the compiled model failed: " << what.substr(0, what.find('\n')) << "\n";
    return 1;
  }
  return 0;
}
