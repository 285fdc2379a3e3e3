#!/usr/bin/env bash
# The whole test suite on a fresh Debian 12 machine: bootstrap, build, ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
scripts/build.sh
cd "${TSREPRO_BUILD_DIR:-build}"
# bootstrap installed python3-torch: a test that would skip itself without it fails instead.
export TSREPRO_TEST_REQUIRE_PYTHON_TORCH=1
ctest --output-on-failure -j "$(nproc)" "$@"
