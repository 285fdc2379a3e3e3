#!/usr/bin/env bash
# Configures and builds tsrepro into ./build (or $TSREPRO_BUILD_DIR). Extra args go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${TSREPRO_BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
