
HERE = os.path.dirname(os.path.abspath(__file__))


def give_up(message):
    """The repro cannot run here: say why and exit 2 (neither reproduced nor healthy)."""
    print("repro.py: " + message, file=sys.stderr)
    sys.exit(2)


# ---- Inputs --------------------------------------------------------------------------------------

def load_inputs():
    """One value per graph input, on DEVICE."""
    if FAKE_INPUTS_SEED is None:
        values = load_saved_inputs(os.path.join(HERE, "inputs.pt"))
    else:
        values = [fake_input(spec, FAKE_INPUTS_SEED, i) for i, spec in enumerate(INPUT_SPECS)]
    if len(values) != len(INPUT_SPECS):
        give_up("inputs: the graph takes %d inputs, got %d" % (len(INPUT_SPECS), len(values)))
    return [to_device(value) for value in values]


def load_saved_inputs(path):
    # Written by tsrepro (torch::pickle_save of a tuple); it may hold int lists, which
    # torch.load's weights_only mode refuses: this file is your own case, so it is trusted.
    try:
        stored = torch.load(path, map_location="cpu", weights_only=False)
    except TypeError:  # a PyTorch without weights_only
        stored = torch.load(path, map_location="cpu")
    if isinstance(stored, (tuple, list)):
        return list(stored)
    if isinstance(stored, torch.Tensor):
        return [stored]
    give_up("%s: expected a tuple of inputs, got %s" % (path, type(stored).__name__))


def fake_input(spec, seed, index):
    """The value tsrepro's runner makes for a spec: tensor i from a generator seeded with seed + i."""
    kind = spec["kind"]
    scalar_types = {"int": int, "float": float, "bool": bool, "int[]": list, "str": str}
    if kind in scalar_types:
        return scalar_types[kind](spec["value"])
    if kind == "none":
        return None
    if kind != "tensor":
        give_up("input %r: cannot make a fake value of kind %r; use real inputs" % (spec["name"], kind))
    dtype = getattr(torch, spec["dtype"].replace("torch.", ""))
    generator = torch.Generator().manual_seed(seed + index)
    sizes, strides = spec["sizes"], spec["strides"]
    if strides_are_dense(sizes, strides):
        tensor = torch.empty_strided(sizes, strides, dtype=dtype)
    else:
        tensor = torch.empty(sizes, dtype=dtype)
    floating = dtype.is_floating_point or dtype.is_complex
    lo = spec["min"] if spec["min"] is not None else (-1.0 if floating else 0.0)
    hi = spec["max"] if spec["max"] is not None else (1.0 if floating else 1.0 if dtype == torch.bool else 9.0)
    lo, hi = min(lo, hi), max(lo, hi)
    if dtype == torch.bool:
        tensor.random_(0, 2, generator=generator)
    elif floating:
        if lo == hi:
            tensor.fill_(lo)
        else:
            tensor.uniform_(lo, hi, generator=generator)
    else:
        tensor.random_(math.ceil(lo), math.floor(hi) + 1, generator=generator)
    return tensor.to(spec.get("device", "cpu"))


def strides_are_dense(sizes, strides):
    """Strides that describe each element exactly once: only those keep their layout when filled."""
    if len(strides) != len(sizes):
        return False
    expected = 1
    for dim in sorted(range(len(sizes)), key=lambda d: strides[d]):
        if sizes[dim] == 1:
            continue
        if strides[dim] != expected:
            return False
        expected *= sizes[dim]
    return True


def to_device(value):
    if isinstance(value, torch.Tensor):
        return value.to(DEVICE)
    if isinstance(value, tuple):
        return tuple(to_device(item) for item in value)
    if isinstance(value, list):
        return [to_device(item) for item in value]
    return value


def clone_values(values):
    """Deep copies, so that no run sees another's in-place mutations."""
    def clone(value):
        if isinstance(value, torch.Tensor):
            return value.detach().clone().requires_grad_(value.requires_grad)
        if isinstance(value, tuple):
            return tuple(clone(item) for item in value)
        if isinstance(value, list):
            return [clone(item) for item in value]
        return value
    return [clone(value) for value in values]


def gradient_inputs():
    """Which inputs get gradients with --backward: floating user inputs, and the lifted ones that
    required grad in the module (parameters, not buffers)."""
    return [BACKWARD and (not spec.get("lifted") or spec.get("requires_grad", False)) for spec in INPUT_SPECS]


def fresh_inputs(inputs, with_grad):
    """Fresh copies for one run; inputs that get gradients become leaves that require grad."""
    copies = clone_values(inputs)
    for i, wanted in enumerate(with_grad):
        if wanted and isinstance(copies[i], torch.Tensor) and copies[i].is_floating_point():
            copies[i] = copies[i].detach().requires_grad_(True)
    return copies


def cast_floating_to_fp64(value):
    """The fp64 reference run's inputs: floating tensors as float64, nested containers followed."""
    if isinstance(value, torch.Tensor):
        if not value.is_floating_point() or value.dtype == torch.float64:
            return value
        copy = value.detach().to(torch.float64)
        return copy.requires_grad_(True) if value.requires_grad else copy
    if isinstance(value, tuple):
        return tuple(cast_floating_to_fp64(item) for item in value)
    if isinstance(value, list):
        return [cast_floating_to_fp64(item) for item in value]
    if isinstance(value, dict):
        return {key: cast_floating_to_fp64(item) for key, item in value.items()}
    return value


# ---- The graph -----------------------------------------------------------------------------------

def load_graph():
    for library in EXTENSION_LIBRARIES:  # the custom operators the graph calls
        torch.ops.load_library(library)
    graph = torch._C.parse_ir(GRAPH_IR)
    if DEVICE != "cpu":
        point_device_constants_at(graph, DEVICE)
    return graph


def point_device_constants_at(graph, device):
    """Every Device constant (nested blocks too) names DEVICE, as tsrepro's --device does."""
    for node in graph.findAllNodes("prim::Constant", True):
        if node.output().type().kind() == "DeviceObjType" and node.hasAttribute("value"):
            node.s_("value", str(torch.device(device)))


def output_count(graph):
    return len(list(graph.outputs()))


def unpack_outputs(result, count):
    """One Python value per graph output, from what a call returned."""
    if count == 0:
        return []
    return [result] if count == 1 else list(result)
