#!/usr/bin/env bash
# The whole test suite against Debian 13 (trixie): libtorch 2.6 with LLVM-enabled NNC, gcc 14,
# python3-torch 2.6, torchvision 0.21: scripts/test.sh in the Debian 13 root that
# scripts/in-debian13.sh makes once and keeps (bootstrap.sh installs Debian 13's packages the first
# time). Extra arguments go to ctest, as with scripts/test.sh. Exits with the inner run's status.
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/in-debian13.sh scripts/test.sh "$@"
