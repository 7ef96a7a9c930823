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
  scratch="$DIR/corpus-$corpus"
  mkdir -p "$scratch"
  echo "fuzz: $t for ${SECS}s (seed corpus fuzz/corpus/$corpus)"
  (cd "$DIR" && ASAN_OPTIONS=detect_leaks=1 "./fuzz/$t" -max_total_time="$SECS" -print_final_stats=1 \
      "$scratch" "$ROOT/fuzz/corpus/$corpus" 2>&1 | grep -E "^(stat::|#[0-9]+ +DONE|==[0-9]+==ERROR|SUMMARY)" || true)
  if ls "$DIR"/crash-* "$DIR"/leak-* "$DIR"/timeout-* >/dev/null 2>&1; then
    echo "fuzz: $t found a failing input:" "$DIR"/crash-* "$DIR"/leak-* "$DIR"/timeout-* 2>/dev/null >&2
    exit 1
  fi
done
echo "fuzz: no crash"
