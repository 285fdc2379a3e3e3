#!/usr/bin/env bash
# The whole real-model corpus (tests/corpus/): torchvision classification models, torchaudio's
# models and every construct model is made (random weights, nothing downloaded), imported, run
# under jit, nnc and
# ofi, its optimized graphs compared with the public PyTorch API's, an injected mid-graph fault
# minified and the minified repro.py run. CI runs the `make_corpus.py --list-ci` subset through
# ctest (the corpus.* tests); this runs them all, which takes the better part of an hour on 2
# cores (densenet121's and swin_t's minifies dominate).
#
#   scripts/corpus.sh                 # all models; the table goes to build/corpus-full/TABLE.md
#   scripts/corpus.sh resnet18 swin_t # some of them
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
scripts/build.sh
build="${TSREPRO_BUILD_DIR:-build}"
out="$build/corpus-full"
/usr/bin/python3 tests/corpus/make_corpus.py "$out/models" "$@"
exec /usr/bin/python3 tests/corpus/run_corpus.py --tsrepro "$build/tsrepro" --corpus "$out/models" \
  --work "$out/work" --table "$out/TABLE.md" "$@"
