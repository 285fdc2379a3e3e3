class BackwardError(torch.autograd.Function):  # the injected fault's op: a copy of x whose backward raises
    @staticmethod
    def forward(ctx, x, where):
        ctx.where = where
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError("tsrepro injected backward error at " + ctx.where)


TSREPRO_OPS = torch.library.Library("tsrepro", "DEF")  # tsrepro::backward_error, as tsrepro's runner defines it
TSREPRO_OPS.define("backward_error(Tensor x, str where) -> Tensor")
TSREPRO_OPS.impl("backward_error", BackwardError.apply, "CompositeImplicitAutograd")
