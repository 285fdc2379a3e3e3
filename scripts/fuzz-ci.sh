#!/usr/bin/env bash
# CI's bounded fuzzing: every fuzz target for ${TSREPRO_FUZZ_SECONDS:-30} seconds (two minutes
# in all), on Debian 12's clang. Exit 1 when any target found a crash or a hang (scripts/fuzz.sh
# saves the input under fuzz/regressions/ and prints its name).
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
seconds=${TSREPRO_FUZZ_SECONDS:-30}
status=0
for target in case_json ir_text torch_save input_spec; do
  scripts/fuzz.sh "$target" "$seconds" || status=1
done
exit "$status"
