#!/usr/bin/env bash
# Every test: set-up, build, ctest (unit, ranks-as-threads, fault, MPI np 1..5, fake nodes,
# soak, preload, examples; GPU tests are reported skipped where no GPU is usable), then
# the sanitizer jobs (ASan+UBSan, TSan: scripts/sanitize.sh) and a short fuzzing run of
# each libFuzzer target (scripts/fuzz.sh).
#   scripts/test.sh [ctest args]     MCCL_TEST_EXTRA=0 skips the sanitizer and fuzz jobs
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRA=${MCCL_TEST_EXTRA:-1}
[ "$EXTRA" = 1 ] && export MCCL_SETUP_FUZZ=1
t0=$SECONDS
scripts/setup.sh
echo "test: set-up took $((SECONDS - t0)) s"
t0=$SECONDS
scripts/build.sh
echo "test: build took $((SECONDS - t0)) s"
t0=$SECONDS
(cd "${MCCL_BUILD_DIR:-build}" && ctest --output-on-failure -j "${MCCL_TEST_JOBS:-1}" "$@")
echo "test: ctest took $((SECONDS - t0)) s"
[ "$EXTRA" = 1 ] || exit 0
t0=$SECONDS
scripts/sanitize.sh asan
echo "test: ASan+UBSan job took $((SECONDS - t0)) s"
t0=$SECONDS
scripts/sanitize.sh tsan
echo "test: TSan job took $((SECONDS - t0)) s"
t0=$SECONDS
scripts/fuzz.sh
echo "test: fuzz job took $((SECONDS - t0)) s"
