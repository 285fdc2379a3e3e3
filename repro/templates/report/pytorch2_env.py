# What a PyTorch 2 repro.py says in its header about where it was made (repro/environment.h,
# pytorch2_environment): the versions after_aot's repros name, and the torch._inductor.config
# values that differ from their defaults in this environment (its TORCHINDUCTOR_* variables), as
# after_aot writes them. Prints one JSON object.
import json
import platform
import re

import torch

facts = {"torch": torch.__version__, "python": platform.python_version(), "compiler": None, "inductor_config": []}
try:
    import torch._inductor.config as inductor_config

    # after_aot's lines, less the private bookkeeping (_save_config_ignore and the like)
    facts["inductor_config"] = [line for line in inductor_config.codegen_config().splitlines()
                                if line.startswith("torch._inductor.config.")
                                and not line.startswith("torch._inductor.config._")]
    from torch._inductor import cpp_builder

    compiler = cpp_builder.get_cpp_compiler()
    version = re.search(r"(gcc|clang) version [^ ]+", cpp_builder.get_compiler_version_info(compiler))
    facts["compiler"] = version.group(0) if version else compiler
except Exception:  # an older torch, or no C++ compiler: the versions alone
    pass
print(json.dumps(facts))
