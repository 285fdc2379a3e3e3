"""The benchmark drivers' torch work, done in a child process so that the drivers never load
libtorch: PSS divides each shared page among all the processes that map it, so a driver holding
libtorch would take a share of the measured tree's libtorch pages (about 45 MiB on the real-model
rows) and make the tree look smaller than it is for a user who runs tsrepro alone.

Usage: /usr/bin/python3 torch_side.py describe
       /usr/bin/python3 torch_side.py real-case MODEL POSITION MODEL_PT INPUTS_PT
       /usr/bin/python3 torch_side.py twin-inputs ELEMENTS INPUTS_PT
       /usr/bin/python3 torch_side.py as-tuple INPUTS_PT TUPLE_PT

describe prints one JSON object: the torch version and real_models.py's models, positions and
culprit operator.
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(*args):
    """From a driver: runs this script with args and returns its stdout."""
    return subprocess.run([sys.executable, os.path.abspath(__file__)] + [str(a) for a in args], check=True,
                          stdout=subprocess.PIPE, text=True).stdout


def main():
    import torch
    command = sys.argv[1]
    if command == "describe":
        import real_models
        print(json.dumps({"torch": torch.__version__, "models": list(real_models.MODELS),
                          "positions": list(real_models.POSITIONS), "culprit": real_models.CULPRIT_ATEN}))
    elif command == "real-case":
        import real_models
        model_name, position, model_path, inputs_path = sys.argv[2:6]
        torch.jit.save(real_models.scripted(real_models.model_with_culprit(model_name, position)), model_path)
        torch.save((real_models.example_input(),), inputs_path)
    elif command == "twin-inputs":
        import twins
        torch.save(twins.inputs(int(sys.argv[2])), sys.argv[3])
    elif command == "as-tuple":  # libtorch's pickle_load reads tuples, not one-element lists
        torch.save(tuple(torch.load(sys.argv[2])), sys.argv[3])
    else:
        sys.exit("torch_side.py: unknown command %r" % command)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    main()
