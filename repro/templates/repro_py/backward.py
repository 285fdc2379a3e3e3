def with_gradients(side):  # --backward: a side's outputs, then d loss / d input for every input
    def run(inputs):
        for i in __GRADIENT_INPUTS__:  # floating user inputs and lifted parameters get gradients
            inputs[i] = inputs[i].requires_grad_() if inputs[i].is_floating_point() else inputs[i]
        outputs = side(inputs)
        loss = scalar_loss(outputs)
        if loss is not None:
            loss.backward()
        return [outputs, [v.grad if torch.is_tensor(v) and v.is_floating_point() else None for v in inputs]]
    return run


def scalar_loss(out):  # torch._dynamo.testing.reduce_to_scalar_loss
    if isinstance(out, torch.Tensor):
        return out.sum() / out.numel() if out.is_floating_point() and out.numel() and out.requires_grad else None
    parts = [p for p in map(scalar_loss, out if isinstance(out, (list, tuple)) else []) if p is not None]
    return sum(parts) / len(out) if parts else None


reference, backend = with_gradients(reference), with_gradients(backend)
