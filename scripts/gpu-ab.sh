#!/usr/bin/env bash
# One call on the GPU machine: the same mccl-threads-bench cases under several builds of
# libmccl, interleaved (variant after variant, case by case, round after round) so that
# every build sees the same machine state; then the GPU tests under each build that asks
# for them. The table at the end (scripts/ab_table.py) gives each variant's time against
# the first's, the minimum over the rounds.
#
#   scripts/gpu-ab.sh CASES [ROUNDS]
#
# Variants: every folder .carry/ab/NAME holding a libmccl.so.0 (scripts/gpu-carry.sh
# MCCL_AB="NAME=dir ..."), in the order of MCCL_AB_ORDER (default: as listed, sorted).
# CASES: one case a line, "NAME | ENV=VALUE ... | mccl-threads-bench arguments"; lines
# starting with # are comments; the case "tests" instead runs the GPU tests (of the packed
# build) with the environment given, gtest filter in MCCL_AB_FILTER.
# Ranks are threads sharing the GPU(s): mccl-threads-bench -r 2 unless the case says -r.
set -uo pipefail
cd "$(dirname "$0")/.."
cases=${1:?usage: scripts/gpu-ab.sh CASES [ROUNDS]}
rounds=${2:-2}
BIN=${MCCL_BIN:-.carry}
if [ -f "$BIN/pack.tar.xz" ] && [ ! -f "$BIN/libmccl.so.0" ]; then tar -xJf "$BIN/pack.tar.xz" -C "$BIN"; fi
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=${MCCL_TIMEOUT:-20}
# Ranks sharing a GPU spin in kernels on several streams: 32 hardware queues, so that no
# rank's kernel waits behind a peer's (scripts/gpu-sweep.sh).
export CUDA_DEVICE_MAX_CONNECTIONS=32
FINAL=${OUT:-gpu-out}
mkdir -p "$FINAL"
work=$(mktemp -d /tmp/gpu-ab.XXXXXX)
variants=${MCCL_AB_ORDER:-$(ls "$BIN/ab")}
{ nvidia-smi -L; date -u; echo "variants:" $variants; } > "$work/device.txt"
cat "$work/device.txt"

trim() { local x="${1#"${1%%[![:space:]]*}"}"; echo "${x%"${x##*[![:space:]]}"}"; }  # no xargs: quotes

run_case() {  # variant env args...
  local lib=$PWD/$BIN/ab/$1 envs=$2; shift 2
  # shellcheck disable=SC2086
  env LD_LIBRARY_PATH="$lib:$PWD/$BIN" $envs timeout 150 "$BIN/mccl-threads-bench" "$@" 2>&1 | grep -v '^#'
  echo "rc=${PIPESTATUS[0]}"
}

for r in $(seq 1 "$rounds"); do
  while IFS='|' read -r name envs args; do
    name=$(trim "$name")
    [ -z "$name" ] || [ "${name:0:1}" = "#" ] || [ "$name" = tests ] && continue
    case " $args " in *" -r "*) ;; *) args="-r 2 $args" ;; esac
    for v in $variants; do
      echo "== $v r$r $name"
      # shellcheck disable=SC2086
      run_case "$v" "$envs" $args
    done
  done < "$cases"
done > "$work/ab.txt"

# The GPU tests link mccl statically: they check the build they were made with (the one
# scripts/gpu-carry.sh packed), not each variant.
while IFS='|' read -r name envs args; do
  [ "$(trim "$name")" = tests ] || continue
  log="$work/tests_$(trim "$envs" | tr -c 'A-Za-z0-9=\n' _ | tr -d '\n').log"
  # shellcheck disable=SC2086
  env MCCL_SHARED_GPU=1 $envs timeout 240 "$BIN/mccl_gpu_tests" --gtest_filter="${MCCL_AB_FILTER:-GpuSingleProcess.*}" \
    > "$log" 2>&1
  echo "tests [$(trim "$envs")]: rc=$? $(grep -aE '^\[  (PASSED|FAILED) ' "$log" | tr '\n' ' ')"
  grep -a -m5 -E '^\[  FAILED  \]|Failure' "$log" | cut -c1-300
done < "$cases" | tee "$work/tests.txt"

python3 scripts/ab_table.py "$work/ab.txt" | tee "$work/ab_table.md"
tar -C "$work" -czf "$FINAL/ab_logs.tgz" .
cp "$work/ab_table.md" "$FINAL/"
