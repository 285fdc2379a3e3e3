#pragma once
// The profiling graph executor as a PreparedGraph: shared by the jit, nnc and ofi backends,
// which differ only in the global JIT switches they set and the passes they run first.

#include <memory>
#include <optional>
#include <string>

#include "backends/fusion_group.h"
#include "tsrepro/backend.h"

namespace torch::jit {
struct Module;
struct Node;
}  // namespace torch::jit

namespace tsrepro {

// The process-wide JIT switches a backend needs. They are applied around every compile and run
// and restored after, because one worker serves many backends in turn.
struct JitSwitches {
  // setGraphExecutorOptimize: false is what torch.jit.optimized_execution(False) gives a module.
  bool optimize = true;
  // overrideCanFuseOnCPU: NNC on the CPU. Unset: libtorch's own default, as a program that never
  // calls it gets (off in 1.13 without LLVM, on in 2.6 with LLVM: jit and ofi fuse there too).
  std::optional<bool> fuse_on_cpu;
  bool te_fuser = true;  // setTensorExprFuserEnabled
  bool fusion_group_inlining = true;
  bool dynamic_shape_fusion = false;
  bool reductions = false;              // setTexprReductionsEnabled
  std::optional<std::string> strategy;  // "static" or "dynamic" (fusion strategy, depth 2)
};

// Applies `switches` for its lifetime.
class ScopedJitSwitches {
 public:
  explicit ScopedJitSwitches(const JitSwitches& switches);
  ~ScopedJitSwitches();
  ScopedJitSwitches(const ScopedJitSwitches&) = delete;
  ScopedJitSwitches& operator=(const ScopedJitSwitches&) = delete;

 private:
  struct Saved;
  std::unique_ptr<Saved> saved_;
};

// Compiles `graph` with the profiling executor: runs the profiling runs on `sample_inputs`,
// then asks for the optimized plan (where fusers and other passes run: the compile phase).
std::unique_ptr<PreparedGraph> prepare_with_profiling_executor(std::shared_ptr<torch::jit::Graph> graph,
                                                               const std::vector<c10::IValue>& sample_inputs,
                                                               const JitSwitches& switches);

// A loaded module's forward as a program calls it, with `switches` applied: the profiling runs on
// `sample_inputs` first, then each run() calls forward on a fresh deep copy of the module (forward
// may update the module's state, and every run of a case starts from the state it was saved with;
// the copies share the compiled methods, so the executor's plan carries over).
std::unique_ptr<PreparedGraph> prepare_module_with_profiling_executor(const torch::jit::Module& module,
                                                                      const std::vector<c10::IValue>& sample_inputs,
                                                                      const JitSwitches& switches);

}  // namespace tsrepro
