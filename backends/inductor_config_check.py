# Checks inductor's `--backend-opt config=KEY=VALUE` entries against the torch._inductor.config of
# the Python that compiles (backends/inductor_config_check.h runs it once per command, before any
# case runs): a misspelt key or a value of the wrong type must be the user's error, said in one
# line, and never reach a compile, where it would read as a compiler bug.
#
#   python3 -c "<this file>" '{"KEY": "LITERAL", ...}'
#
# Exit 0, printing nothing: every key exists and each value fits its key's declared type. Exit 1:
# one line saying which does not (the nearest keys for a misspelt one). Nothing of the config is
# set, read or called beyond its table of entries: a key is a string looked up in that table, a
# value a Python literal read by ast.literal_eval.
import ast
import difflib
import json
import sys
import types
import typing

import torch._inductor.config as config


def entries():
    """{key: (default, declared type)}: the config module's table (torch 2.6's _config), or, where
    a torch keeps none, its keys' defaults, each typed by the default's type."""
    table = getattr(config, "_config", None)
    if isinstance(table, dict):
        return {key: (entry.default, getattr(entry, "value_type", type(entry.default))) for key, entry in table.items()}
    return {key: (value, type(value)) for key, value in config.get_config_copy().items()}


def fits(value, declared):
    """Whether `value` may be set where `declared` is the key's type. A type that cannot be told
    (no declared type beside a default of None, typing constructs other than Optional and Union)
    takes anything: only what is surely wrong is refused."""
    if declared is type(None) or declared is typing.Any:
        return True
    origin = typing.get_origin(declared)
    if origin is typing.Union or origin is types.UnionType:
        return any(value is None if arm is type(None) else fits(value, arm) for arm in typing.get_args(declared))
    if origin is not None:
        return isinstance(origin, type) and isinstance(value, origin)
    if not isinstance(declared, type):
        return True
    if declared is bool or declared is int:
        return type(value) is declared  # True is an int to Python, not to a count
    if declared is float:
        return type(value) in (int, float)
    return isinstance(value, declared)


def type_name(declared):
    return declared.__name__ if isinstance(declared, type) else str(declared).replace("typing.", "")


def main(requested):
    table = entries()
    for key, text in requested.items():
        if key not in table:
            near = difflib.get_close_matches(key, list(table), n=3, cutoff=0)
            return "torch._inductor.config has no key %r (nearest: %s)" % (key, ", ".join(near))
        default, declared = table[key]
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return "%s=%s: the value is no Python literal (1, 0.5, True, None, 'text')" % (key, text)
        if not fits(value, declared):
            return "torch._inductor.config.%s takes %s (default %r), not %s %s" % (
                key, type_name(declared), default, type(value).__name__, text)
    return None


why = main(json.loads(sys.argv[1]))
if why:
    print(why)
    sys.exit(1)
