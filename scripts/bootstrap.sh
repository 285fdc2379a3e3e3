#!/usr/bin/env bash
# Installs what tsrepro needs from Debian 12's archive, and nothing that is already there.
# Safe to run again and again (idempotent); needs root or sudo when something is missing.
set -euo pipefail

packages=(
  build-essential cmake
  libtorch-dev            # libtorch 1.13.1: TorchScript IR, interpreter, profiling executor, NNC
  libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev
  libboost-dev libboost-filesystem-dev   # Boost.Process (header-only) + the filesystem it links
  libgtest-dev
  python3-torch           # /usr/bin/python3 with torch: example models, repro.py checks
  python3-torchvision     # the real-model corpus (torchvision.models, random weights, nothing downloaded)
  pyflakes3               # the Python lint the tests run (ctest -R lint)
)

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
