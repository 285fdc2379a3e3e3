

# ---- Running one side ----------------------------------------------------------------------------

def reduce_to_scalar_loss(out):
    """torch._dynamo.testing.reduce_to_scalar_loss: mean of each floating tensor, averaged."""
    if isinstance(out, torch.Tensor):
        if not out.is_floating_point() or out.numel() == 0 or not out.requires_grad:
            return None
        return out.sum() / out.numel()
    items = list(out) if isinstance(out, (tuple, list)) else []
    total = None
    for item in items:
        part = reduce_to_scalar_loss(item)
        if part is not None:
            total = part if total is None else total + part
    return total / len(items) if total is not None else None


def input_gradients(outputs, inputs):
    """Backpropagates the scalar loss of `outputs`: d loss / d input for every input (or None)."""
    loss = reduce_to_scalar_loss(tuple(outputs))
    if loss is not None:
        loss.backward()
    return [value.grad if isinstance(value, torch.Tensor) and value.is_floating_point() else None
            for value in inputs]


def detached(value):
    if isinstance(value, torch.Tensor):
        return value.detach()
    if isinstance(value, tuple):
        return tuple(detached(item) for item in value)
    if isinstance(value, list):
        return [detached(item) for item in value]
    if isinstance(value, dict):
        return {key: detached(item) for key, item in value.items()}
    return value


def run_reference(graph, inputs, with_grad):
    """The reference side, in this process (it is known to be healthy): outputs and gradients."""
    run_inputs = fresh_inputs(inputs, with_grad)
    prepared = BACKENDS[REFERENCE](graph, fresh_inputs(inputs, with_grad))
    outputs = prepared(run_inputs)
    grads = input_gradients(outputs, run_inputs) if any(with_grad) else []
    return detached(outputs), grads


class Failure(Exception):
    """A verdict that ends the evaluation early: an exception, crash or timeout of the backend."""

    def __init__(self, status, phase, signature, message):
        super().__init__(message)
        self.status, self.phase, self.signature, self.message = status, phase, signature, message


# ---- The tested backend, in a child process ------------------------------------------------------
# A crash or hang of the backend is observed here, not suffered: the child is killed after
# TIMEOUT_SECONDS, and a signal that kills it becomes the verdict.

def run_tested_backend():
    """Outputs and gradients of the tested backend, or raises Failure."""
    # A fork is cheap (no second `import torch`) and safe before this process has run anything;
    # CUDA does not survive a fork, so a CUDA repro starts a fresh interpreter instead.
    context = multiprocessing.get_context("fork" if DEVICE == "cpu" and hasattr(os, "fork") else "spawn")
    stage = context.Array("c", 16, lock=False)  # shared memory: readable even after a crash
    with tempfile.TemporaryDirectory(prefix="repro-") as scratch:
        result_path = os.path.join(scratch, "result.pt")
        child = context.Process(target=tested_backend_child, args=(result_path, stage))
        child.start()
        child.join(TIMEOUT_SECONDS)
        stage_name = stage.value.decode() or "start"
        if child.is_alive():
            child.kill()
            child.join()
            raise Failure("timeout", stage_name, "timeout",
                          "no answer within %g s during %s" % (TIMEOUT_SECONDS, stage_name))
        if child.exitcode < 0:
            name = signal_name(-child.exitcode)
            raise Failure("crash", stage_name, "crash:" + name,
                          "the backend process died by %s during %s" % (name, stage_name))
        if stage_name == "setup":
            give_up("the backend process failed before it could run the graph (its error is above)")
        if child.exitcode != 0 or not os.path.exists(result_path):
            raise Failure("crash", stage_name, "crash:exit %d" % child.exitcode,
                          "the backend process exited with status %d during %s" % (child.exitcode, stage_name))
        result = load_result(result_path)
    if "exception" in result:
        phase, kind, message = result["exception"]
        raise Failure("exception", phase, exception_signature(phase, kind, message), kind + ": " + message)
    return result["outputs"], result["grads"]


def tested_backend_child(result_path, stage):
    def enter(name):
        stage.value = name.encode()

    def finish(result):
        torch.save(result, result_path)

    enter("setup")
    inputs = load_inputs()
    with_grad = gradient_inputs()
    graph = load_graph()
    enter("compile")
    try:
        prepared = BACKENDS[BACKEND](graph, fresh_inputs(inputs, with_grad))
    except Exception as error:
        return finish({"exception": ("compile",) + describe_exception(error)})
    enter("run")
    run_inputs = fresh_inputs(inputs, with_grad)
    try:
        outputs = prepared(run_inputs)
    except Exception as error:
        # The profiling executor builds its optimized plan inside the first real run; tsrepro
        # builds it before: a failure while no plan exists yet is a compile error there.
        phase = "run" if prepared.plan_ready() else "compile"
        return finish({"exception": (phase,) + describe_exception(error)})
    grads = []
    if BACKWARD:
        enter("backward")
        try:
            grads = input_gradients(outputs, run_inputs)
        except Exception as error:
            return finish({"exception": ("backward",) + describe_exception(error)})
    finish({"outputs": detached(outputs), "grads": grads})


def load_result(path):
    try:
        return torch.load(path, weights_only=False)
    except TypeError:  # a PyTorch without weights_only
        return torch.load(path)


def describe_exception(error):
    """(type, message) as tsrepro names them: the TorchScript interpreter's traceback is
    unwrapped to the error it carries."""
    kind, message = type(error).__name__, str(error)
    if "The following operation failed in the TorchScript interpreter" in message:
        errors = list(re.finditer(r"(^|\n)([A-Za-z_.]*Error): ", message))
        if errors:
            kind, message = errors[-1].group(2), message[errors[-1].end():]
    return kind, message


def exception_signature(phase, kind, message):
    """exception:<phase>:<Type>: <first line> with addresses, paths and numbers masked."""
    first_line = next((line for line in message.split("\n") if line.strip(" \t\r")), "")
    masked = re.sub(r"0x[0-9a-fA-F]+", "0x?", first_line)
    masked = re.sub(r"(/[^\s:'\"(),]+)+", "<path>", masked)
    masked = re.sub(r"[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?", "N", masked)
    return "exception:%s:%s: %s" % (phase, kind, masked)


def signal_name(number):
    """The names tsrepro knows; others as "signal N", as tsrepro writes them."""
    for name in ("SIGSEGV", "SIGABRT", "SIGBUS", "SIGFPE", "SIGILL",
                 "SIGKILL", "SIGTERM", "SIGTRAP", "SIGSYS", "SIGPIPE"):
        if getattr(signal, name, None) == number:
            return name
    return "signal %d" % number
