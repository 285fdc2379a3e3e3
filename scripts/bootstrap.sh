#!/usr/bin/env bash
# Installs what tsrepro needs from Debian's archive, and nothing that is already there: on Debian 12
# (bookworm) libtorch 1.13.1 and gcc 12, on Debian 13 (trixie) libtorch 2.6.0 and gcc 14 (the
# package names are the same; scripts/test-debian13.sh runs the tests in a Debian 13 root).
# Safe to run again and again (idempotent); needs root or sudo when something is missing.
set -euo pipefail

packages=(
  build-essential cmake
  libtorch-dev            # libtorch 1.13.1 / 2.6.0: TorchScript IR, interpreter, profiling executor, NNC
  libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev
  libgtest-dev
  python3-torch           # /usr/bin/python3 with torch: example models, repro.py checks
  python3-torchvision     # the real-model corpus (torchvision.models, random weights, nothing downloaded)
  python3-torchaudio      # the real-model corpus (torchaudio.models, random weights, nothing downloaded)
  python3-setuptools      # Inductor (backends inductor, aoti) on Debian 13: python3-torch does not pull it in
  pyflakes3               # the Python lint the tests run (ctest -R lint)
  graphviz                # dot: the graphs drawn in the sweep's index.html and beside ISSUE.md
)
# For tests whose subject does not depend on libtorch, and for fuzzing: a run that skips those
# (TSREPRO_TEST_SKIP_LIBTORCH_INDEPENDENT=1, scripts/test-debian13.sh's) does without them.
if [ "${TSREPRO_TEST_SKIP_LIBTORCH_INDEPENDENT:-}" != 1 ]; then
  packages+=(
    slurm-wlm munge         # tsrepro sweep --executor slurm: its test starts a one-node cluster
    chromium                # the sweep page's test loads it in a real headless browser
    clang libclang-rt-dev   # scripts/fuzz.sh: the fuzz targets under libFuzzer + AddressSanitizer
  )
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all packages present"
  exit 0
fi

echo "bootstrap: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
