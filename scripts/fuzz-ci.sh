#!/usr/bin/env bash
# CI's bounded fuzzing: every fuzz target for a fixed number of inputs from a fixed seed (about
# 30 s each on 2 cores, two minutes in all), on Debian 12's clang. Repeatable: the same inputs
# run here and in CI. Exit 1 when any target crashed or hung (scripts/fuzz.sh saves the input
# under fuzz/regressions/ and names it).
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
status=0
export TSREPRO_FUZZ_SEED=${TSREPRO_FUZZ_SEED:-1}
for target_runs in case_json:120000 ir_text:150000 torch_save:75000 input_spec:800000; do
  TSREPRO_FUZZ_RUNS=${target_runs#*:} scripts/fuzz.sh "${target_runs%%:*}" 600 || status=1
done
exit "$status"
