class CaseModule(torch.nn.Module):  # the graph as a scripted module holds it
    def forward(self, __PARAMETERS__):
        return case_graph(__ARGUMENTS__)


def __ROLE__(inputs):  # ofi: torch.jit.optimize_for_inference(torch.jit.freeze(module.eval()))
    global case_graph
    case_graph, module = torch._C._create_function_from_graph("case_graph", GRAPH.copy()), CaseModule()
    for name, value in __LIFTED__.items():  # the lifted parameters and buffers are buffers again
        module.register_buffer(name, value) if torch.is_tensor(value) else setattr(module, name, value)
    frozen = torch.jit.freeze(torch.jit.script(module.eval()), optimize_numerics=__NUMERICS__)
    frozen = torch.jit.optimize_for_inference(frozen)  #[mkldnn]
    torch._C._jit_pass_fuse_frozen_conv_add_relu(frozen.graph)  # optimize_for_inference without MKLDNN  #[!mkldnn]
    torch._C._jit_pass_transpose_frozen_linear(frozen.graph)  #[!mkldnn]
    frozen(*fresh(__USER_INPUTS__))  # the profiling run (PyTorch profiles one); the next call compiles
    return frozen(*__USER_INPUTS__)
