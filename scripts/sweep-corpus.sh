#!/usr/bin/env bash
# `tsrepro sweep` over real models of the corpus (tests/corpus/make_corpus.py): the models are made
# (random weights, nothing downloaded) into OUT/models, which is the zoo, and swept into OUT/sweep;
# torchvision's operator library is loaded when a model calls it (detection models). The sweep is
# resumable: the same command again goes on where a killed one stopped.
#
#   scripts/sweep-corpus.sh OUT BACKENDS [NAME ...]   # no NAME: every model of the corpus
#   scripts/in-debian13.sh scripts/sweep-corpus.sh /tsrepro/pt2-sweep export,inductor,aoti alexnet vgg11_bn
#
# TSREPRO_SWEEP_ARGS adds flags to the sweep (default: -j 2 --repeat 1 --timeout 1200; an Inductor
# compile of a detection model takes minutes on 2 cores). docs/CORPUS.md holds what it found.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: scripts/sweep-corpus.sh OUT BACKENDS [NAME ...]" >&2; exit 2; }
out=$1
backends=$2
shift 2
scripts/bootstrap.sh
scripts/build.sh
build="${TSREPRO_BUILD_DIR:-build}"

# Made once: a second run (resuming the sweep) keeps the models the first one swept.
[ -f "$out/models/MANIFEST.json" ] || /usr/bin/python3 tests/corpus/make_corpus.py "$out/models" "$@"

libraries=()
while IFS= read -r library; do
  [ -n "$library" ] && libraries+=(--load-library "$library")
done < <(/usr/bin/python3 -c '
import json, sys
print("\n".join(sorted({m["load_library"] for m in json.load(open(sys.argv[1])) if m.get("load_library")})))
' "$out/models/MANIFEST.json")

# shellcheck disable=SC2086  # TSREPRO_SWEEP_ARGS is a list of flags
exec "$build/tsrepro" sweep "$out/models" -o "$out/sweep" --backends "$backends" \
  ${TSREPRO_SWEEP_ARGS:--j 2 --repeat 1 --timeout 1200} "${libraries[@]}"
