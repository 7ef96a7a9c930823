#!/usr/bin/env bash
# The OSU Micro-Benchmarks' NCCL benchmarks (OMB 7.x "xccl": allreduce, allgather, bcast,
# reduce, reduce_scatter, alltoall, latency, bw), built unchanged from their sources with a
# Makefile of ours (scripts/osu/Makefile.mccl: the defines OMB's configure gives a CUDA +
# NCCL build) against mccl's nccl.h, and run on mccl and on NVIDIA's NCCL: the binaries
# need libnccl.so.2, which lib-mccl (libmccl under NCCL's name) provides when it comes first
# on the library path. The OMB sources are never part of this repository: bring a checkout
# (its c/util and c/xccl); the binaries go to .carry/osu (ignored by git).
#
#   scripts/osu.sh build CHECKOUT     (here: needs MPI, CUDA and build/nccl-home)
#   scripts/osu.sh run [DIR]          (GPU machine: OMB needs 2 ranks or more; prints
#                                      each run's last lines)
# With fewer GPUs than ranks (OSU_NP=2 on one GPU), mccl only, its ranks sharing the GPU
# across processes (MCCL_SHARED_GPU=2: their kernels time-slice, so every wait costs a
# time slice): a correctness run of the unchanged programs, not a timing; NVIDIA's NCCL
# refuses two processes on one GPU. OSU_ITERS, OSU_WARMUP (200, 20), OSU_MAX (16 MiB).
set -uo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
build)
  src=${2:?usage: scripts/osu.sh build CHECKOUT}
  B=${MCCL_BUILD_DIR:-build}
  out=${OSU_OUT:-.carry/osu}
  [ -f "$B/nccl-home/lib/libnccl.so" ] || { echo "build mccl first ($B/nccl-home)"; exit 1; }
  work=$(mktemp -d)
  cp -r "$src/c" "$work/" && cp scripts/osu/Makefile.mccl "$work/"
  if make -C "$work" -f Makefile.mccl -j2 NCCL_HOME="$PWD/$B/nccl-home" NCCL_LIB="$PWD/$B/nccl-home/lib" \
       > "$work/build.log" 2>&1; then
    rm -rf "$out" && mkdir -p "$out/lib-mccl"
    cp "$work"/bin/osu_xccl_* "$out/"
    echo "osu: built $(ls "$out"/osu_xccl_* | wc -l) benchmarks against mccl's headers"
  else
    echo "osu: build FAILED (last lines of the log):"; tail -20 "$work/build.log"; rm -rf "$work"; exit 1
  fi
  rm -rf "$work"
  cp -L "$B/src/libmccl.so.0" "$out/lib-mccl/"
  ln -sf libmccl.so.0 "$out/lib-mccl/libnccl.so.2"
  strip --strip-debug "$out"/osu_xccl_* "$out/lib-mccl/libmccl.so.0" 2>/dev/null
  du -sh "$out"
  ;;
run)
  dir=${2:-.carry/osu}
  ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
  np=${OSU_NP:-$ngpu}
  [ "$np" -ge 2 ] || { echo "osu: needs 2 ranks or more (OSU_NP; found $ngpu GPUs)"; exit 1; }
  export NCCL_NVLS_ENABLE=0
  libs="mccl nccl"
  if [ "$np" -gt "$ngpu" ]; then libs=mccl; export MCCL_SHARED_GPU=2; fi
  log=${OUT:-/tmp}
  run1() {  # lib bench args...
    local lib=$1 b=$2; shift 2
    local lp=${LD_LIBRARY_PATH:-}; [ "$lib" = mccl ] && lp="$PWD/$dir/lib-mccl:$lp"
    local f="$log/osu_${lib}_$b.txt"
    LD_LIBRARY_PATH="$lp" timeout "${OSU_TIMEOUT:-120}" mpirun --allow-run-as-root --oversubscribe --bind-to none \
      -np "$np" -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x MCCL_SHARED_GPU="${MCCL_SHARED_GPU:-0}" \
      "$dir/osu_xccl_$b" -d cuda "$@" > "$f" 2>&1
    echo "== $lib $b $* rc=$?"; grep -aE '^ *[0-9]' "$f" | tail -"${OSU_LINES:-4}"
  }
  it=(-i "${OSU_ITERS:-200}" -x "${OSU_WARMUP:-20}")
  for b in allreduce allgather bcast reduce reduce_scatter alltoall; do
    for lib in $libs; do run1 $lib $b -m 8:${OSU_MAX:-16777216} "${it[@]}"; done
  done
  for b in latency bw; do  # point-to-point: the buffers' places are arguments (D D: device)
    for lib in $libs; do run1 $lib $b -m 8:${OSU_MAX:-16777216} "${it[@]}" D D; done
  done
  ;;
*)
  sed -n 2,13p "$0"; exit 1 ;;
esac
