#!/usr/bin/env bash
# The main job on a bundled example, on a fresh Debian 12 machine: install what is missing,
# build, import a ~120-node TorchScript model, and show what tsrepro says about it under a
# healthy backend (NNC) and under a backend that fails on aten::relu.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
scripts/build.sh
build="${TSREPRO_BUILD_DIR:-build}"
tsrepro="$build/tsrepro"
out="$build/demo"
rm -rf "$out"
mkdir -p "$out"

model=examples/models/chain100_scripted
echo "== tsrepro import $model.pt"
"$tsrepro" import "$model.pt" --inputs "$model.inputs.pt" -o "$out/case"

echo
echo "== tsrepro run $out/case --backend nnc   (the TensorExpr fuser: this model is fine)"
"$tsrepro" run "$out/case" --backend nnc

echo
echo "== tsrepro run $out/case --backend inject:segfault@aten::relu   (a backend that crashes on relu)"
status=0
"$tsrepro" run "$out/case" --backend inject:segfault@aten::relu || status=$?
echo "(exit status $status: 1 means the failure reproduces; the CLI itself survived the crash)"
