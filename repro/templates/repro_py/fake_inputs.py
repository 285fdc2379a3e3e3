def fake(index, dtype, sizes, strides, low, high):  # tsrepro's fake input `index`: seeded, uniform in [low, high]
    generator = torch.Generator().manual_seed(__SEED__ + index)
    tensor = torch.empty(sizes, dtype=dtype) if strides is None else torch.empty_strided(sizes, strides, dtype=dtype)
    if dtype == torch.bool or not (dtype.is_floating_point or dtype.is_complex):
        return tensor.random_(int(low), int(high) + 1, generator=generator)
    return tensor.fill_(low) if low == high else tensor.uniform_(low, high, generator=generator)
