# What `tsrepro report` asks of the Python that runs repro.py, the facts that
# `python -m torch.utils.collect_env` reports about it. Prints one JSON object.
import json
import platform
import sys

import torch

facts = {
    "python": "%s (%s)" % (platform.python_version(), sys.executable),
    "torch": torch.__version__,
    "debug_build": torch.version.debug,
    "cuda_available": torch.cuda.is_available(),
    "cuda_version": torch.version.cuda,
    "mkldnn_available": torch.backends.mkldnn.is_available(),
    "openmp_available": torch.backends.openmp.is_available(),
}
llvm_enabled = getattr(torch._C, "_llvm_enabled", None)
facts["llvm_enabled"] = llvm_enabled() if llvm_enabled is not None else None
if torch.cuda.is_available():
    facts["gpu"] = torch.cuda.get_device_name(0)
print(json.dumps(facts))
