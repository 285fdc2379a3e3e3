#!/usr/bin/env bash
# The whole test suite against Debian 13 (trixie): libtorch 2.6 with LLVM-enabled NNC, gcc 14,
# python3-torch 2.6, torchvision 0.21: scripts/test.sh in the Debian 13 root that
# scripts/in-debian13.sh makes once and keeps (bootstrap.sh installs Debian 13's packages the first
# time). Extra arguments go to ctest, as with scripts/test.sh. Exits with the inner run's status.
#
# The tests whose subject is tsrepro's own logic (LIBTORCH_INDEPENDENT_TEST() in tests/support/process.h:
# the sweep's executors and resume, the minifier on injected faults) ran on Debian 12's line already;
# here they skip, which keeps CI's two runs inside its time. TSREPRO_TEST_SKIP_LIBTORCH_INDEPENDENT=0
# runs them too.
set -euo pipefail
cd "$(dirname "$0")/.."
export TSREPRO_TEST_SKIP_LIBTORCH_INDEPENDENT="${TSREPRO_TEST_SKIP_LIBTORCH_INDEPENDENT:-1}"
exec scripts/in-debian13.sh scripts/test.sh "$@"
