#!/usr/bin/env bash
# Minifies the real bugs of examples/bugs/ (all of bugs.json, or the names given) with a built
# tsrepro and keeps each one's minified repro.py as examples/bugs/NAME/minified/repro.py: the
# reproducer a user of that libtorch would paste into an issue; beside it the minified case
# (case.json, graph.ir, inputs.pt). Run on the libtorch a bug was found
# on; on another, the same file says whether the bug is still there (exit 1) or gone (exit 0).
#   examples/bugs/minify_bugs.sh [NAME ...]        (from the repository root, after scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
tsrepro="${TSREPRO_BUILD_DIR:-build}/tsrepro"
catalogue=examples/bugs/bugs.json
# "name backend" per bug of the catalogue, those named on the command line only when some are.
listed=$(/usr/bin/python3 -c '
import json, sys
bugs, wanted = json.load(open(sys.argv[1]))["bugs"], sys.argv[2:]
unknown = set(wanted) - {bug["name"] for bug in bugs}
if unknown:
    sys.exit("minify_bugs.sh: not in %s: %s" % (sys.argv[1], ", ".join(sorted(unknown))))
for bug in bugs:
    if not wanted or bug["name"] in wanted:
        print(bug["name"], bug["backend"])' "$catalogue" "$@")
mapfile -t bugs <<<"$listed"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for entry in "${bugs[@]}"; do
  read -r name backend <<<"$entry"
  bug=examples/bugs/$name
  "$tsrepro" import "$bug/model.pt" --inputs "$bug/inputs.pt" -o "$work/$name.case" >/dev/null
  "$tsrepro" minify "$work/$name.case" --backend "$backend" -o "$work/$name.out" -j 2 >/dev/null
  rm -rf "$bug/minified"
  mkdir -p "$bug/minified"
  cp "$work/$name.out/minified/repro.py" "$bug/minified/"
  # The minified case itself: what `tsrepro explain --passes` and `tsrepro report` are asked of.
  cp "$work/$name.out/minified/case.json" "$work/$name.out/minified/graph.ir" "$work/$name.out/minified/inputs.pt" "$bug/minified/"
  # A repro.py whose inputs are too large to write into it reads them from inputs.pt beside it.
  if grep -q "def saved_inputs" "$bug/minified/repro.py"; then cp "$work/$name.out/minified/inputs.pt" "$bug/minified/"; fi
  # So does one whose module for a PyTorch 2 backend is too large to write into it.
  if grep -q '"case_module.pt"' "$bug/minified/repro.py"; then cp "$work/$name.out/minified/case_module.pt" "$bug/minified/"; fi
  echo "$name: $bug/minified/repro.py ($(wc -l <"$bug/minified/repro.py") lines)"
done
