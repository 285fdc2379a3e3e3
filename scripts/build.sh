#!/usr/bin/env bash
# Configures and builds tsrepro into ./build (or $TSREPRO_BUILD_DIR). Extra args go to cmake.
# Release (-O2, CMakeLists.txt): debug info (-g) made a clean build a quarter slower on 2 cores;
# `scripts/build.sh -DCMAKE_BUILD_TYPE=RelWithDebInfo` gives it back for a debugger.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${TSREPRO_BUILD_DIR:-build}"
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
