#!/usr/bin/env bash
# Copies what the GPU machine needs (stripped) into .carry/ for the device tool.
set -euo pipefail
cd "$(dirname "$0")/.."
B=${MCCL_BUILD_DIR:-build}
# nccl-tests and the OSU benchmarks built by scripts/nccl-tests.sh and scripts/osu.sh
# (.carry/nccl-tests, .carry/osu, or inside the last pack) stay and go into the pack, their
# lib-mccl refreshed with this build's libmccl.
keep=$(mktemp -d)
for d in nccl-tests osu; do
  if [ ! -d .carry/$d ] && [ -f .carry/pack.tar.xz ] && tar -tJf .carry/pack.tar.xz ./$d >/dev/null 2>&1; then
    tar -xJf .carry/pack.tar.xz -C .carry ./$d
  fi
  if [ -d .carry/$d ]; then mv .carry/$d "$keep/"; fi
done
rm -rf .carry && mkdir -p .carry
for d in nccl-tests osu; do
  [ -d "$keep/$d" ] || continue
  mv "$keep/$d" .carry/
  # The pack's own libmccl, not a second copy (the 64 MiB limit).
  ln -sf ../../libmccl.so.0 .carry/$d/lib-mccl/libmccl.so.0
done
rmdir "$keep"
cp -L "$B"/src/libmccl.so.0 "$B"/src/libmccl_mpi.so.0 .carry/
ln -sf libmccl_mpi.so.0 .carry/libmccl_mpi.so
cp "$B"/tests/mccl_gpu_tests "$B"/tests/mccl_preload_gpu_tests "$B"/bench/mccl-perf .carry/
# MCCL_CARRY_ONE_GPU=1: leave out what needs two GPUs or more (the MPI GPU tests).
[ -n "${MCCL_CARRY_ONE_GPU:-}" ] || cp "$B"/tests/mccl_gpu_mpi_tests .carry/
[ -f "$B"/tests/mccl_gpu_devapi_tests ] && cp "$B"/tests/mccl_gpu_devapi_tests .carry/
# MCCL_CARRY_UNIT=1: the unit tests too (internals that need a GPU to take their other branch).
[ -n "${MCCL_CARRY_UNIT:-}" ] && cp "$B"/tests/mccl_unit_tests .carry/
for ex in allreduce_world two_level_reduce cg_solver mpi_allreduce_bench; do cp "$B"/mpi_examples/$ex .carry/; done
for m in micro_latency micro_p2p_bw micro_stack_reserve micro_launch_args micro_mpi_tiny micro_mpi_pingpong micro_word_wait micro_ce_copy mccl-threads-bench; do [ -f "$B"/bench/$m ] && cp "$B"/bench/$m .carry/; done
for x in nccl-perf mccl-init-bench nccl-init-bench libmccl_fold_devices.so; do [ -f "$B"/bench/$x ] && cp "$B"/bench/$x .carry/; done
for f in "$B"/mpi_examples/guide_*; do [ -x "$f" ] && cp "$f" .carry/; done
# MCCL_BEFORE=dir: a previous libmccl.so.0 goes to .carry/before (measured beside this one).
if [ -n "${MCCL_BEFORE:-}" ]; then mkdir -p .carry/before && cp -L "$MCCL_BEFORE"/libmccl.so.0 .carry/before/; fi
# MCCL_AB="NAME=dir ...": builds of libmccl.so.0 to .carry/ab/NAME, the variants of
# scripts/gpu-ab.sh (measured side by side in one call).
for v in ${MCCL_AB:-}; do mkdir -p ".carry/ab/${v%%=*}" && cp -L "${v#*=}"/libmccl.so.0 ".carry/ab/${v%%=*}/"; done
# (.carry/nccl-tests and .carry/osu were stripped by their scripts.)
for f in .carry/* .carry/before/* .carry/ab/*/*; do [ -L "$f" ] || strip --strip-debug "$f" 2>/dev/null || true; done
# The device tool carries 64 MiB at most: pack everything (kernels compress about 4x);
# scripts/gpu-sweep.sh unpacks it on the GPU machine. xz -9's 64 MiB window stores the
# second and later builds of libmccl (MCCL_BEFORE, MCCL_AB) as little more than their
# differences from the first.
tar -C .carry -cf - . | xz -T2 -9 > .carry-pack.tar.xz
rm -rf .carry && mkdir .carry && mv .carry-pack.tar.xz .carry/pack.tar.xz
du -sh .carry
