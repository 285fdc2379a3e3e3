#!/usr/bin/env bash
# Every model of the corpus (not only CI's --list-ci subset): imported, and its eager module form
# (the plain PyTorch the module route hands torch.compile and torch.export) run uncompiled against
# the TorchScript reference: run_corpus.py's step 2b alone. Making all the models and checking
# them takes about 10 minutes on 2 cores, so ctest runs it on request only:
#
#   TSREPRO_CORPUS_FULL=1 ctest -L corpus-full            # in the build directory
#
# Without TSREPRO_CORPUS_FULL=1 it exits 77 (ctest: skipped). CI's corpus tests do the same check
# on the --list-ci models at every run.
#   tests/corpus/module_form_all.sh TSREPRO WORK_DIR
set -euo pipefail
[ "${TSREPRO_CORPUS_FULL:-0}" = 1 ] || { echo "skipped: set TSREPRO_CORPUS_FULL=1 to run the whole corpus"; exit 77; }
[ $# -eq 2 ] || { echo "usage: tests/corpus/module_form_all.sh TSREPRO WORK_DIR" >&2; exit 2; }
here=$(dirname "$0")
tsrepro=$1 work=$2
[ -f "$work/models/MANIFEST.json" ] || /usr/bin/python3 "$here/make_corpus.py" "$work/models" >/dev/null
exec /usr/bin/python3 "$here/run_corpus.py" --tsrepro "$tsrepro" --corpus "$work/models" --work "$work/runs" \
  --backends "" --no-minify --no-verify --no-public-graphs
