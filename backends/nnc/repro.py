def __ROLE__(__PARAMETERS__):  # nnc: the profiling executor with the TensorExpr fuser forced on for the CPU
    torch._C._jit_override_can_fuse_on_cpu(True)
    torch._C._jit_set_te_must_use_llvm_cpu(torch._C._llvm_enabled())  # NNC's interpreter only without LLVM
    torch._C._debug_set_fusion_group_inlining(False)  #[no_inlining]
    torch._C._jit_set_texpr_dynamic_shape_enabled(True)  #[dynamic_shapes]
    torch._C._jit_set_texpr_reductions_enabled(True)  #[reductions]
    torch._C._jit_set_fusion_strategy([("__STRATEGY__", 2)])  #[strategy]
    return profiled(inputs)
