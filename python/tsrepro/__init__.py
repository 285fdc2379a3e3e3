"""tsrepro for Python programs: the TSREPRO_AFTER workflow around a scripted module.

    import tsrepro
    fn = tsrepro.wrap(torch.jit.script(model), backend="nnc")
    out = fn(x)

See tsrepro.after for the variables it honours.
"""

from .after import Settings, TsreproError, tsrepro_executable, wrap

__all__ = ["wrap", "Settings", "TsreproError", "tsrepro_executable"]
