"""The peer: functorch's fx_minifier (as shipped with Debian's python3-torch 1.13) on the FX twin
of a benchmark case, with an oracle that does the work tsrepro's inject backends do: run the
candidate eagerly (the reference), torch.jit.trace it, run the traced module twice (profiling
warm-up), and fail when the culprit ops are all present (accuracy: perturb the traced output
and compare with allclose, as tsrepro compares).

Usage: /usr/bin/python3 fx_peer.py CASE_NAME  ->  one JSON line {queries, seconds, final_nodes}
       /usr/bin/python3 fx_peer.py real:MODEL:POSITION   (real_models.py: the model's make_fx graph,
                                                           failing while the culprit op is present)
"""

import contextlib
import io
import json
import sys
import time
import warnings

warnings.filterwarnings("ignore")

import torch  # noqa: E402
from functorch._src.fx_minifier import minifier  # noqa: E402

import real_models  # noqa: E402
import twins  # noqa: E402


def ops_in(mod):
    # make_fx graphs call overloads (clamp_min.default): the op's name is what comes before the dot.
    return {n.target.__name__.split(".")[0] for n in mod.graph.nodes if n.op == "call_function"}


def make_oracle(check):
    culprits = check.split(":")[-1].split("+")
    accuracy = check.startswith("accuracy:")

    def module_fails(mod, inps):
        try:
            expected = mod(*inps)
            traced = torch.jit.trace(mod, inps, check_trace=False)
            traced(*inps)
            actual = traced(*inps)
            present = all(c in ops_in(mod) for c in culprits)
            if accuracy:
                if present:
                    actual = [a + 1e-2 for a in actual] if isinstance(actual, (tuple, list)) else actual + 1e-2
                flat = lambda v: list(v) if isinstance(v, (tuple, list)) else [v]
                return not all(torch.allclose(e, a, rtol=1e-4, atol=1e-4) for e, a in zip(flat(expected), flat(actual)))
            if present:
                raise RuntimeError("injected compile error")
            return False
        except RuntimeError:
            return True

    return module_fails


def main():
    name = sys.argv[1]
    if name.startswith("real:"):
        _, model_name, position = name.split(":")
        gm = real_models.fx_graph(real_models.model_with_culprit(model_name, position))
        inps = [real_models.example_input()]
        check = real_models.CULPRIT_ATEN.split("::")[1]
    else:
        spec, _, check = twins.cases()[name]
        gm = twins.to_fx(spec)
        inps = twins.inputs()
    queries = [0]
    oracle = make_oracle(check)

    def counted(mod, inps):
        queries[0] += 1
        return oracle(mod, inps)

    start = time.monotonic()
    with contextlib.redirect_stdout(io.StringIO()), torch.no_grad():
        minimal, _ = minifier(gm, inps, counted, dump_state=lambda *a: None)
    seconds = time.monotonic() - start
    final = sum(1 for n in minimal.graph.nodes if n.op == "call_function")
    print(json.dumps({"queries": queries[0], "seconds": seconds, "final_nodes": final,
                      "ops": sorted(ops_in(minimal))}))


if __name__ == "__main__":
    main()
