#!/usr/bin/env bash
# NVIDIA's nccl-tests, built unchanged with their own Makefile against mccl (NCCL_HOME =
# build/nccl-home: mccl's headers, libmccl as libnccl.so) and, to compare, against NVIDIA's
# NCCL; on the GPU machine, every test on both, with nccl-tests' own correctness check.
# The nccl-tests checkout is never part of this repository: bring one (a release of
# github.com/NVIDIA/nccl-tests); the binaries go to .carry/nccl-tests (ignored by git,
# carried to the GPU machine by the device tool).
#
#   scripts/nccl-tests.sh build CHECKOUT        (here: needs nvcc, MPI and build/)
#   scripts/nccl-tests.sh run [BIN_DIR]         (GPU machine; prints one line per run;
#                                                NCCL_TESTS_FOLD=lib on one GPU, see run)
set -uo pipefail
cd "$(dirname "$0")/.."
TESTS=${NCCL_TESTS_LIST:-"all_reduce all_gather broadcast reduce reduce_scatter alltoall scatter gather sendrecv hypercube"}

case "${1:-}" in
build)
  src=${2:?usage: scripts/nccl-tests.sh build CHECKOUT}
  B=${MCCL_BUILD_DIR:-build}
  out=${NCCL_TESTS_OUT:-.carry/nccl-tests}
  arch=${NCCL_TESTS_GENCODE:--gencode=arch=compute_90,code=sm_90}
  # nccl-tests reads MPI_HOME/include and MPI_HOME/lib: the directory above MPI's headers.
  mpi_home=$(dirname "$(mpicc --showme:incdirs | awk '{print $1}')")
  [ -f "$B/nccl-home/lib/libnccl.so" ] || { echo "build mccl first ($B/nccl-home)"; exit 1; }
  rm -rf "$out" && mkdir -p "$out/lib-mccl"
  # One build, against mccl's headers. The programs need libnccl.so.2 (nccl-tests' -lnccl
  # finds the CUDA directory's libnccl before NCCL_HOME's, which changes nothing: the
  # symbols are NCCL's API either way), so the same binaries run on mccl with lib-mccl
  # (libmccl under NCCL's name) first on the library path, and on NVIDIA's NCCL without.
  if make -C "$src/src" -j2 MPI=1 MPI_HOME="$mpi_home" NCCL_HOME="$PWD/$B/nccl-home" CUDA_HOME=/usr/local/cuda \
       NVCC_GENCODE="$arch" BUILDDIR="$PWD/$out" BIN_FILES_LIST="$TESTS" > "$out/build.log" 2>&1; then
    echo "nccl-tests: built $(ls "$out"/*_perf | wc -l) programs against mccl's headers"
  else
    echo "nccl-tests: build FAILED (last lines of $out/build.log):"; tail -20 "$out/build.log"; exit 1
  fi
  cp -L "$B/src/libmccl.so.0" "$out/lib-mccl/"
  ln -sf libmccl.so.0 "$out/lib-mccl/libnccl.so.2"
  find "$out" -name "*.o" -delete
  strip --strip-debug "$out"/*_perf "$out/lib-mccl/libmccl.so.0" "$out"/verifiable/*.so* 2>/dev/null
  du -sh "$out"
  ;;
run)
  # NCCL_TESTS_FOLD=lib: a machine with fewer GPUs than the tests' 2 ranks: the ranks are
  # threads of one process (-g 2) sharing the GPU under MCCL_SHARED_GPU=1, the program's
  # device numbers folded onto the GPUs there are (lib = libmccl_fold_devices.so); mccl
  # only (NVIDIA's NCCL refuses two ranks on one GPU), then both at one rank.
  # NCCL_TESTS_MAX: the largest size (256M); NCCL_TESTS_TIMEOUT: seconds a run (300);
  # NCCL_TESTS_LIST: the tests (default: every one); NCCL_TESTS_EXTRA=0: no graph, register
  # and window runs after them.
  dir=${2:-.carry/nccl-tests}
  ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
  [ "$ngpu" -ge 1 ] || { echo "no GPU"; exit 1; }
  fold=${NCCL_TESTS_FOLD:-}
  np=${NCCL_TESTS_NP:-$ngpu}
  export NCCL_NVLS_ENABLE=0
  [ -f "$dir.tar.xz" ] && [ ! -d "$dir" ] && tar -xJf "$dir.tar.xz" -C "$(dirname "$dir")"
  run1() {  # lib ranks-per-process test args...: one run, its check verdict, the largest size's busbw
    local lib=$1 g=$2 t=$3; shift 3
    local log; log="$dir/$lib.g$g.$t.$(echo "$*" | tr -c 'a-zA-Z0-9' _).log"
    local libpath=${LD_LIBRARY_PATH:-}; [ "$lib" = mccl ] && libpath="$PWD/$dir/lib-mccl:$libpath"
    # Ranks sharing a GPU: each rank's blocks must be resident at once (a block that spins
    # for a peer whose blocks have no SM left waits forever), so channels are capped.
    local p=$np pre=()
    [ -n "${LD_PRELOAD_FOLD:-}" ] && pre=(-x MCCL_SHARED_GPU -x MCCL_FOLD_DEVICES -x LD_PRELOAD="$LD_PRELOAD_FOLD")
    [ "$g" -gt 1 ] && { p=1; pre=(-x LD_PRELOAD="$fold" -x MCCL_SHARED_GPU=1 -x MCCL_FOLD_DEVICES="$g"
      -x NCCL_MAX_NCHANNELS="${NCCL_TESTS_FOLD_CHANNELS:-16}"); }
    [ -n "${NCCL_PROTO:-}" ] && pre+=(-x NCCL_PROTO)
    LD_LIBRARY_PATH="$libpath" timeout "${NCCL_TESTS_TIMEOUT:-300}" mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$p" \
      -x NCCL_NVLS_ENABLE -x LD_LIBRARY_PATH "${pre[@]}" "$dir/${t}_perf" -g "$g" "$@" > "$log" 2>&1
    local rc=$?
    local oob; oob=$(grep -a "Out of bounds values" "$log" | awk '{print $NF, $(NF-1)}' | head -1)
    local last; last=$(grep -aE '^ +[0-9]+ ' "$log" | tail -1 | awk '{print $1 " B: in place " $(NF-1) " GB/s busbw, " $NF " wrong"}')
    local libv; libv=$(grep -aoE 'nccl-library=[0-9]+|NCCL version [0-9.]+' "$log" | head -1)
    printf '%-5s g%-2s %-15s %-26s rc=%s  check: %-9s %-22s %s\n' "$lib" "$g" "$t" "$*" "$rc" "${oob:-?}" "${libv:-?}" "$last"
  }
  libs="mccl nccl"; g=1
  if [ -n "$fold" ] && [ "$np" -gt "$ngpu" ]; then
    # NCCL_TESTS_FOLD with NCCL_TESTS_NP=2 on one GPU: processes instead of threads, mccl
    # alone, sharing the GPU across processes (MCCL_SHARED_GPU=2: time-sliced kernels, so
    # the check, not a timing); the fold library makes nccl-tests see np GPUs.
    libs=mccl; export MCCL_SHARED_GPU=2 LD_PRELOAD_FOLD=$fold MCCL_FOLD_DEVICES=$np; fold=""
  elif [ -n "$fold" ]; then
    libs=mccl; g=2; np=1
  fi
  for t in $TESTS; do
    for lib in $libs; do run1 $lib $g $t -b 8 -e "${NCCL_TESTS_MAX:-256M}" -f 8 -c 1 -w 5 -n 20; done
  done
  [ "${NCCL_TESTS_EXTRA:-1}" = 1 ] || exit 0   # NCCL_TESTS_EXTRA=0: the tests of the list only
  for lib in $libs; do
    run1 $lib $g all_reduce -b 8 -e 64M -f 8 -c 1 -G 10          # CUDA graphs
    run1 $lib $g all_reduce -b 8 -e 64M -f 8 -c 1 -R 1           # ncclCommRegister
    run1 $lib $g all_reduce -b 8 -e 64M -f 8 -c 1 -R 2           # symmetric windows
    run1 $lib $g all_reduce -b 8 -e 64M -f 8 -c 1 -R 2 -D 1      # the device API's LSA kernel
    run1 $lib $g all_reduce -b 8 -e 64M -f 8 -c 1 -R 2 -G 10     # symmetric windows in graphs
    for t in all_gather broadcast reduce reduce_scatter; do      # the other direct paths
      run1 $lib $g $t -b 8 -e 64M -f 8 -c 1 -R 2
    done
  done
  if [ -n "$fold" ]; then  # one rank, both libraries (one-rank copies against NCCL's)
    for t in all_reduce all_gather alltoall sendrecv; do
      for lib in mccl nccl; do run1 $lib 1 $t -b 8 -e 1G -f 32 -c 1 -w 5 -n 20; done
    done
  fi
  ;;
*)
  sed -n 2,12p "$0"; exit 1 ;;
esac
