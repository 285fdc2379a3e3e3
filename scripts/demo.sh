#!/usr/bin/env bash
# The main job on a bundled example, on a fresh Debian 12 or 13 machine: install what is missing,
# build, import a ~120-node TorchScript model, show what tsrepro says about it under a healthy
# backend (NNC) and under a backend that crashes on aten::relu, minify that crash, then minify a
# real NNC miscompile and run its repro.py with stock PyTorch.
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

echo
echo "== tsrepro minify $out/case --backend inject:segfault@aten::relu -o $out/min_segfault"
"$tsrepro" minify "$out/case" --backend inject:segfault@aten::relu -o "$out/min_segfault" -j 2

bug=examples/bugs/nnc_round_half_even
echo
echo "== a real NNC bug (pytorch/pytorch#103465, see $bug/README.md): import, minify"
"$tsrepro" import "$bug/model.pt" --inputs "$bug/inputs.pt" -o "$out/bug_case"
"$tsrepro" minify "$out/bug_case" --backend nnc -o "$out/min_bug" -j 2

echo
echo "== /usr/bin/python3 $out/min_bug/minified/repro.py   (stock PyTorch, no tsrepro)"
status=0
/usr/bin/python3 "$out/min_bug/minified/repro.py" || status=$?
echo "(exit status $status: 1 means the bug reproduces)"
echo
echo "== tsrepro report $out/min_bug --archive   (ISSUE.md: title, environment, expected vs observed, repro.py)"
"$tsrepro" report "$out/min_bug" --archive
sed -n 1,12p "$out/min_bug/ISSUE.md"
echo "..."

echo
echo "== the same bug found from a program: TSREPRO_AFTER=fusion TSREPRO_LEVEL=4 build/after_demo $bug/model.pt ... nnc"
echo "   (checks every fusion group NNC formed against the interpreter, dumps and minifies the one that differs)"
TSREPRO_AFTER=fusion TSREPRO_LEVEL=4 TSREPRO_DIR="$out/after" "$(dirname "$tsrepro")/after_demo" \
  "$bug/model.pt" "$bug/inputs.pt" nnc 2
