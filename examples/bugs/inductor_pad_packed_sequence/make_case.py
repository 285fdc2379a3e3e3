"""Build examples/bugs/inductor_pad_packed_sequence/{model.pt,inputs.pt}.

Found by the module-route sweep of the corpus (docs/CORPUS.md, issue 52) in torchaudio's Tacotron2,
whose encoder packs its padded text batch for an LSTM and pads the result back: torch.compile of
torch 2.6 fails in Dynamo on `aten::_pad_packed_sequence`, before Inductor: the op has no fake
(meta) kernel, its composite kernel reads `batch_sizes`' data, and a FakeTensor has none:
`TorchRuntimeError: Failed running call_function aten._pad_packed_sequence.default(...): The tensor
has a non-zero number of elements, but its data is not allocated yet.` Eager PyTorch runs it, and
Dynamo neither graph-breaks there nor falls back: the compile raises.

The model: a text encoder as in Tacotron2: an embedding, a bidirectional LSTM over the packed
sequences of a padded batch (lengths given, sorted), padded back, and a linear projection. (The
Python module itself compiles: Dynamo does not trace into torch.nn.utils.rnn and runs it eagerly.
The scripted graph calls the op itself, which the check below compiles, as tsrepro's module form
of the graph does.)

Run from the repository root with Debian 13's Python:
    /usr/bin/python3 examples/bugs/inductor_pad_packed_sequence/make_case.py
"""
import os
import sys

if os.environ.get("PYTHONHASHSEED") != "0":  # byte-identical .pt files from run to run
    os.environ["PYTHONHASHSEED"] = "0"
    os.execv(sys.executable, [sys.executable] + sys.argv)

import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = nn.Embedding(10, 4)
        self.lstm = nn.LSTM(4, 3, batch_first=True, bidirectional=True)
        self.project = nn.Linear(6, 4)

    def forward(self, tokens, lengths):
        x = self.embedding(tokens)
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True)
        out, _ = self.lstm(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True)
        return self.project(out)


def main():
    torch.manual_seed(0)
    model = Encoder().eval()
    inputs = (torch.tensor([[1, 2, 3, 4], [5, 6, 7, 0]]), torch.tensor([4, 3]))
    torch.jit.save(torch.jit.script(model), os.path.join(HERE, "model.pt"))
    torch.save(inputs, os.path.join(HERE, "inputs.pt"))
    def unpack(data, batch_sizes):  # the op the scripted graph calls, as plain PyTorch
        return torch.ops.aten._pad_packed_sequence.default(data, batch_sizes, True, 0.0, 3)[0]

    try:
        with torch.no_grad():
            torch.compile(unpack, backend="inductor")(torch.randn(3, 8), torch.tensor([2, 1]))
    except Exception as error:
        print(f"bug reproduced: {type(error).__name__}: {str(error).splitlines()[0]}")
        return 0
    print("bug NOT reproduced: torch.compile ran it", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
