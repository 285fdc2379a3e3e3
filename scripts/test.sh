#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: bootstrap, build, ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
scripts/build.sh
cd "${TSREPRO_BUILD_DIR:-build}"
ctest --output-on-failure -j "$(nproc)" "$@"
