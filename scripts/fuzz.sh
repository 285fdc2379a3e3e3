#!/usr/bin/env bash
# Runs one fuzz target (fuzz/) for SECONDS under libFuzzer and AddressSanitizer.
#   scripts/fuzz.sh TARGET SECONDS      TARGET: case_json, ir_text, torch_save or input_spec
# Builds the targets with Debian's clang into ./build-fuzz (or $TSREPRO_FUZZ_BUILD_DIR), seeds
# the corpus from fuzz/seeds/TARGET, fuzz/regressions/TARGET and the paths fuzz/extra_seeds.txt
# names, and keeps the grown corpus in BUILD/fuzz-work/TARGET between runs. An input that
# crashes or hangs a target is copied to fuzz/regressions/TARGET/ (the replay tests run it from
# then on: fix the bug, commit the file) and the script exits 1.
# TSREPRO_FUZZ_RUNS=N and TSREPRO_FUZZ_SEED=S make a run repeatable (at most N inputs, from a
# fresh corpus in BUILD/fuzz-work/TARGET-seedS): what CI runs is then what a machine here ran.
set -euo pipefail
cd "$(dirname "$0")/.."
targets="case_json ir_text torch_save input_spec"
usage="usage: scripts/fuzz.sh TARGET SECONDS (TARGET: ${targets// /, })"
target=${1:?$usage}
seconds=${2:?$usage}
[[ " $targets " == *" $target "* ]] || { echo "scripts/fuzz.sh: unknown target '$target' ($usage)" >&2; exit 2; }
[[ "$seconds" =~ ^[0-9]+$ && "$seconds" -gt 0 ]] || { echo "scripts/fuzz.sh: SECONDS must be a positive whole number" >&2; exit 2; }

build="${TSREPRO_FUZZ_BUILD_DIR:-build-fuzz}"
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DTSREPRO_FUZZ=ON -DBUILD_TESTING=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" --target "${target}_fuzzer" -j "$(nproc)"

work="$build/fuzz-work/$target"
repeatable=()
if [[ -n "${TSREPRO_FUZZ_RUNS:-}" ]]; then
  work="$build/fuzz-work/$target-seed${TSREPRO_FUZZ_SEED:-1}"
  rm -rf "$work"
  repeatable=(-runs="$TSREPRO_FUZZ_RUNS" -seed="${TSREPRO_FUZZ_SEED:-1}")
fi
mkdir -p "$work/corpus" "$work/artifacts"
seed() {  # copies a file, or a directory's files, into the corpus
  if [[ -d "$1" ]]; then find "$1" -maxdepth 1 -type f -exec cp -n -t "$work/corpus" {} +; elif [[ -f "$1" ]]; then cp -n "$1" "$work/corpus/"; fi
}
seed "fuzz/seeds/$target"
seed "fuzz/regressions/$target"
while read -r name path; do
  [[ "$name" == "$target" ]] && seed "$path"
done < <(grep -v '^#' fuzz/extra_seeds.txt)

status=0
ASAN_OPTIONS=detect_leaks=0 "$build/fuzz/${target}_fuzzer" "$work/corpus" -max_total_time="$seconds" \
  -timeout=20 -rss_limit_mb=6144 -max_len=65536 -artifact_prefix="$work/artifacts/" -print_final_stats=1 \
  "${repeatable[@]}" || status=$?
if compgen -G "$work/artifacts/*" >/dev/null; then
  mkdir -p "fuzz/regressions/$target"
  for found in "$work/artifacts/"*; do
    mv "$found" "fuzz/regressions/$target/$(basename "$found")"
    echo "scripts/fuzz.sh: $target found fuzz/regressions/$target/$(basename "$found"): fix it, keep the file" >&2
  done
  exit 1
fi
exit "$status"
