#!/usr/bin/env bash
# Every test: set-up, build, ctest (unit, ranks-as-threads, MPI np 1..5; GPU tests skip
# themselves where no GPU is usable).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
cd "${MCCL_BUILD_DIR:-build}"
ctest --output-on-failure -j "${MCCL_TEST_JOBS:-1}" "$@"
