#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (in ${MCCL_FUZZ_DIR:-build-fuzz}) and runs each
# for MCCL_FUZZ_SECONDS (default 30) over the corpus kept in fuzz/corpus. New inputs
# found go to a scratch corpus, not the repository; a crash fails the script and leaves
# the reproducer (crash-*) in the build directory.
#   scripts/fuzz.sh [target...]      targets: fuzz_frames fuzz_unique_id fuzz_knobs
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
DIR=${MCCL_FUZZ_DIR:-build-fuzz}
SECS=${MCCL_FUZZ_SECONDS:-30}
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(fuzz_frames fuzz_unique_id fuzz_knobs)
if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ is missing (scripts/setup.sh installs it with MCCL_SETUP_FUZZ=1)" >&2
  exit 1
fi
if [ ! -f "$DIR/CMakeCache.txt" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMCCL_FUZZ=ON \
    -DMCCL_ENABLE_CUDA=OFF -DMCCL_BUILD_TESTS=OFF -DMCCL_BUILD_BENCH=OFF -DMCCL_BUILD_EXAMPLES=OFF >/dev/null
fi
cmake --build "$DIR" -j "${MCCL_JOBS:-$(nproc)}" --target "${TARGETS[@]}" >/dev/null
for t in "${TARGETS[@]}"; do
  corpus=${t#fuzz_}
  scratch="$ROOT/$DIR/corpus-$corpus"
  log="$ROOT/$DIR/$t.log"
  mkdir -p "$scratch"
  echo "fuzz: $t for ${SECS}s (seed corpus fuzz/corpus/$corpus)"
  # Reproducers (crash-*, leak-*, timeout-*) land in $DIR; the exit code says it all.
  rc=0
  (cd "$DIR" && ASAN_OPTIONS=detect_leaks=1 "./fuzz/$t" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 "$scratch" "$ROOT/fuzz/corpus/$corpus" >"$log" 2>&1) || rc=$?
  grep -E "^(stat::(number_of_executed_units|average_exec_per_sec|new_units_added)|Done [0-9]+ runs|INFO: seed corpus)" "$log" | sed 's/^/  /' || true
  cov=$(grep -oE "cov: [0-9]+ ft: [0-9]+" "$log" | tail -1 || true)
  [ -n "$cov" ] && echo "  final $cov"
  if [ "$rc" -ne 0 ]; then
    echo "fuzz: $t failed (exit $rc); the end of $log:" >&2
    tail -40 "$log" >&2
    exit 1
  fi
done
echo "fuzz: no crash"
