

# ---- Verdict -------------------------------------------------------------------------------------

def evaluate():
    """(status, phase, signature, message, diffs), as tsrepro judges a candidate."""
    try:
        res = run_tested_backend()
    except Failure as failure:
        res = failure
    inputs = load_inputs()
    with_grad = gradient_inputs()
    graph = load_graph()
    try:
        ref = run_reference(graph, inputs, with_grad)
    except Exception as error:
        kind, message = describe_exception(error)
        return "invalid", "ref", "", "the reference (%s) fails on this graph: %s: %s" % (REFERENCE, kind, message), []
    if isinstance(res, Failure):
        return res.status, res.phase, res.signature, res.message, []
    diffs = compare_sides(ref, res, None)
    if any(not diff.ok for diff in diffs) and COMPARE["use_fp64"]:
        # Only now is the fp64 run worth its cost: it can excuse a float32 result that is merely noisy.
        try:
            fp64 = run_reference(graph, [cast_floating_to_fp64(value) for value in inputs], with_grad)
            diffs = compare_sides(ref, res, fp64)
        except Exception:
            pass  # no fp64 reference for this graph (dtype-specific ops): allclose alone decides
    worst = next((diff for diff in diffs if not diff.ok), None)
    if worst is None:
        return "pass", "", "", "", diffs
    return "accuracy", "run", "accuracy:" + worst.dtype, describe_diff(worst), diffs


def describe_diff(diff):
    text = "output %s (%s): max_abs %g, max_rel %g" % (diff.path, diff.dtype, diff.max_abs, diff.max_rel)
    if diff.nonfinite_mismatches:
        text += ", %d inf/NaN elements differ" % diff.nonfinite_mismatches
    return text + (": " + diff.reason if diff.reason else "")


def reproduces(status, signature):
    if not EXPECTED_KIND:  # no failure was recorded: any failure counts
        return status not in ("pass", "invalid")
    if status != EXPECTED_KIND:
        return False
    # A crash must be the same signal (crash:SIGSEGV is not crash:SIGABRT).
    return status != "crash" or not EXPECTED_SIGNATURE or signature == EXPECTED_SIGNATURE


def check_device():
    if DEVICE != "cpu" and torch.device(DEVICE).type == "cuda" and not torch.cuda.is_available():
        give_up("this repro runs on %s, but this PyTorch sees no CUDA device (torch.cuda.is_available() "
                "is False): run it on a machine with a GPU" % DEVICE)


def main():
    check_device()
    print("repro: %s vs %s on %s%s, PyTorch %s" % (REFERENCE, BACKEND, DEVICE, " with backward" if BACKWARD else "",
                                                 torch.__version__))
    started = time.monotonic()
    status, phase, signature, message, diffs = evaluate()
    for diff in diffs:
        print("  output %-8s %-9s max_abs %-12g max_rel %-12g %s" % (
            diff.path, diff.dtype, diff.max_abs, diff.max_rel, "ok" if diff.ok else "FAIL: " + diff.reason))
    print("verdict: %s%s, %.1f s" % (status, " (phase %s)" % phase if phase else "", time.monotonic() - started))
    if signature:
        print("signature: " + signature)
    if message:
        print("message: " + message)
    reproduced = reproduces(status, signature)
    expected = (EXPECTED_KIND or "any failure") + (" (%s)" % EXPECTED_SIGNATURE if EXPECTED_SIGNATURE else "")
    print("expected: %s: %s" % (expected, "reproduced (exit 1)" if reproduced else "not reproduced (exit 0)"))
    return 1 if reproduced else 0


if __name__ == "__main__":
    sys.exit(main())
