#!/usr/bin/env bash
# One call on the GPU machine: fabric microbenchmarks, the GPU tests under each protocol,
# mccl-perf against nccl-perf (eager and CUDA graph), and sweeps of the tuner's knobs.
# Binaries come from scripts/gpu-carry.sh (.carry/). Logs and CSVs go to a work folder,
# tarred into $OUT/logs.tgz with the summary tables beside it (the device tool brings back
# at most 8 files); the last lines printed are the comparison tables.
#
#   scripts/gpu-sweep.sh [tests] [perf] [graph] [llsweep] [simplesweep] [micro] [memory]
#                        [profile] [fifosweep] [init] [protosweep] [devapi] [shared] [launch]
#                        [nccltests] [windows] [osu] [protos] [preload] [channels] [chsweep]
#                        [hoststall] [mpitiny] [pipesweep]
#                        [chprofile] [units] [unitsweep] [modes] [knobab]
#                        (default: tests perf graph llsweep simplesweep micro)
#   shared  ranks as threads sharing the GPUs (MCCL_SHARED_GPU): the single-process tests at
#           2, 3 and 4 ranks, and mccl-threads-bench (host path and kernel fixed costs)
#   launch  what a kernel's parameter block costs a launch (micro_launch_args)
#   protos  ranks as threads sharing the GPUs: each protocol forced, 16 KiB - 8 MiB, the
#           previous libmccl ($BIN/before) and this one in one call (mccl-threads-bench)
#   osu     the OSU Micro-Benchmarks' NCCL benchmarks on mccl and NCCL (2 GPUs or more)
#   channels  blocks (SMs) per collective and size, mccl next to NCCL (NCCL_DEBUG_SUBSYS=TUNING)
#   windows collectives on symmetric windows: their tests, and the direct path against the
#           FIFO path on the same buffers (mccl-threads-bench -w; MCCL_WIN_DIRECT 2, 1, 0); the copy engines
#           (NCCL_CTA_POLICY=2) between processes, and against the SM path on 2+ GPUs
#   chsweep Simple forced at 8/16/24/32/64 channels (CH_COUNTS), 2 MiB - 2 GiB, mccl default and
#           NCCL alongside: the fewest channels within 3 % of the best, per collective and size
#   mpitiny ways to complete an 8-byte MPI_Allreduce on device buffers (micro_mpi_tiny)
#   pipesweep  Simple at PIPE_CH channels (24): FIFO slots, slot bytes, slices, threads
#   units   the GPU tests that run Simple units (single process and MPI np 2)
#   unitsweep  Simple units on and off at forced channels and FIFO sizes (UNIT_CFG), 8 MiB - 2 GiB, NCCL alongside
#   modes   every collective in each buffer mode (mccl-perf/nccl-perf -R: 0 cudaMalloc, 1
#           ncclCommRegister, 2 symmetric windows; and windows under NCCL_CTA_POLICY=2, the
#           copy engines), eager 8 B - 2 GiB and graphs 8 B - 1 MiB, mccl and NCCL in one
#           call: mode against mode, and mccl's plain buffers against NCCL's best (modes.md)
#   knobab  the knob choices made on one shared GPU (copies to itself on the copy engines,
#           the plain-buffer direct band, Send/Recv and the data-moving collectives on plain
#           buffers on the copy engines) against their off values, NCCL alongside
#   chprofile  MCCL_PROFILE of Simple at PROF_CH channels (16 24 64): blocks' run times, SMs
#   hoststall  a collective order run with MCCL_PROFILE's host phases (host time per call
#           as long as the kernel's, seen once in an eager sweep), then AllGather alone
#   preload  MPI_Allreduce on device buffers (mpi_examples/mpi_allreduce_bench, 8 B - 16 MiB),
#           Open MPI staged through host memory against LD_PRELOAD=libmccl_mpi.so (2 GPUs or more)
#   nccltests  NVIDIA's nccl-tests on mccl and on NCCL (scripts/nccl-tests.sh); on one GPU,
#           mccl's two ranks share it (bench/fold_devices.c) and both libraries run one rank
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=${OUT:-gpu-out}
OUT=$(mktemp -d /tmp/gpu-sweep.XXXXXX)
mkdir -p "$FINAL"
BIN=${MCCL_BIN:-.carry}
# scripts/gpu-carry.sh packs the binaries (the device tool's 64 MiB limit).
if [ -f "$BIN/pack.tar.xz" ] && [ ! -f "$BIN/libmccl.so.0" ]; then tar -xJf "$BIN/pack.tar.xz" -C "$BIN"; fi
export LD_LIBRARY_PATH="$PWD/$BIN:${LD_LIBRARY_PATH:-}"
export NCCL_NVLS_ENABLE=0   # never NVLink multicast on shared machines
export MCCL_TIMEOUT=${MCCL_TIMEOUT:-20}
# Ranks sharing a GPU (shared, windows, nccltests on one GPU) spin in kernels on several
# streams of one device: with CUDA's default 8 hardware queues two streams can share one,
# and a kernel queued behind a peer's spinning kernel never starts (3 ranks in a CUDA graph
# hung so; 32 queues, 2026-11-24). Read when the CUDA context is made.
export CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-32}
NGPU=$(nvidia-smi -L 2>/dev/null | wc -l)
MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT"
STEPS=${*:-tests perf graph llsweep simplesweep micro}
has() { [[ " $STEPS " == *" $1 "* ]]; }
{ date -u; nvidia-smi -L; nvidia-smi topo -m; } > "$OUT/topo.txt" 2>&1
echo "GPUs: $NGPU   steps: $STEPS"

if has micro; then
  timeout 60 "$BIN/micro_latency" > "$OUT/micro_latency.txt" 2>&1
  timeout 60 "$BIN/micro_p2p_bw" >> "$OUT/micro_latency.txt" 2>&1
  cat "$OUT/micro_latency.txt"
fi

if has tests; then
  # Default tuner (LL small, Simple large), then each protocol forced for every size.
  for proto in default LL LL128 Simple; do
    env=(); [ "$proto" != default ] && env=(NCCL_PROTO=$proto)
    filter='*'; [ "$proto" = Simple ] && filter='GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.PointToPointPatterns'
    if [ "$proto" = LL ] || [ "$proto" = LL128 ]; then
      filter='GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.PointToPointPatterns:GpuSingleProcess.OneThreadGroups*:GpuSingleProcess.GraphCapture*'
    fi
    env "${env[@]}" timeout 200 "$BIN/mccl_gpu_tests" --gtest_filter="$filter" > "$OUT/gpu_single_$proto.log" 2>&1
    echo "gpu_single[$proto]: rc=$? $(grep -aE '^\[  (PASSED|FAILED) ' "$OUT/gpu_single_$proto.log" | tr '\n' ' ')"
    grep -a -m5 -E 'rank [0-9]+:|Failure|expected' "$OUT/gpu_single_$proto.log" | cut -c1-300
  done
  for proto in default LL LL128; do
    p=""; [ "$proto" != default ] && p=$proto
    NCCL_PROTO=$p MCCL_TEST_QUICK=1 timeout 150 $MPIRUN -x NCCL_PROTO -x MCCL_TEST_QUICK -np "$NGPU" \
      "$BIN/mccl_gpu_mpi_tests" > "$OUT/gpu_mpi_$proto.log" 2>&1
    echo "gpu_mpi[$proto]: rc=$? $(grep -aE '(PASSED|FAILED) ' "$OUT/gpu_mpi_$proto.log" | head -2 | tr '\n' ' ')"
    grep -a -m5 -E 'Failure|expected' "$OUT/gpu_mpi_$proto.log" | cut -c1-300
  done
fi

if has preload && [ "$NGPU" -ge 2 ] && [ -x "$BIN/mpi_allreduce_bench" ]; then
  # The same unmodified MPI program twice: plain (not CUDA-aware: staged through the host)
  # and with libmccl_mpi preloaded (device buffers go to mccl). Issue 12's goal: 8 B <= 10 us.
  for how in plain preload; do
    pre=(); [ "$how" = preload ] && pre=(-x LD_PRELOAD="$PWD/$BIN/libmccl_mpi.so")
    timeout 120 $MPIRUN "${pre[@]}" -np "$NGPU" "$BIN/mpi_allreduce_bench" $((16 << 20)) 8 \
      > "$OUT/mpi_allreduce_$how.txt" 2>&1
    echo "== mpi_allreduce_bench $how: rc=$?"; cat "$OUT/mpi_allreduce_$how.txt"
  done
fi

if has protos && [ -x "$BIN/mccl-threads-bench" ]; then
  # The ranks' blocks must all be resident: 16 channels a rank at most.
  for lib in before now; do
    libdir="$BIN"; [ "$lib" = before ] && libdir="$BIN/before"
    [ -f "$libdir/libmccl.so.0" ] || continue
    for proto in LL LL128 Simple; do
      LD_LIBRARY_PATH="$PWD/$libdir:$LD_LIBRARY_PATH" NCCL_PROTO=$proto NCCL_MAX_NCHANNELS=16 timeout 120 \
        "$BIN/mccl-threads-bench" -r ${BENCH_RANKS:-2} -b 16K -e 8M -f 2 -n 200 \
        -o allreduce,reducescatter,allgather,sendrecv > "$OUT/protos_${lib}_$proto.txt" 2>&1
      echo "== $lib $proto rc=$?"; cat "$OUT/protos_${lib}_$proto.txt"
    done
    # Where an LL128 AllReduce's block-steps spend their time (MCCL_PROFILE, thread 0).
    for size in 256K 4M; do
      LD_LIBRARY_PATH="$PWD/$libdir:$LD_LIBRARY_PATH" NCCL_PROTO=LL128 NCCL_MAX_NCHANNELS=16 MCCL_PROFILE=1 \
        timeout 60 "$BIN/mccl-threads-bench" -r ${BENCH_RANKS:-2} -b $size -e $size -n 50 -G 0 -o allreduce 2>&1 | tail -12
      echo "== $lib LL128 profile $size rc=$?"
    done
  done > "$OUT/protos.txt"
  cat "$OUT/protos.txt"
fi

if has shared; then
  # Ranks as threads of one process sharing the GPUs (MCCL_SHARED_GPU), rank r on GPU
  # r % count. The fixed costs first (mccl-threads-bench, MCCL_PROFILE for the host and
  # kernel phases of an 8-byte AllReduce), then the single-process tests at 2, 3 and 4
  # ranks (odd rank counts on any machine). The ranks' blocks must all be resident at
  # once: channels are capped so that every rank's blocks fit the GPU's SMs.
  if [ -x "$BIN/mccl-threads-bench" ]; then
    # A previous libmccl in $BIN/before (scripts/gpu-carry.sh MCCL_BEFORE=dir) runs first:
    # both versions measured in one call.
    for lib in before now; do
      libdir="$BIN"; [ "$lib" = before ] && libdir="$BIN/before"
      [ -f "$libdir/libmccl.so.0" ] || continue
      for nr in ${BENCH_RANKS:-2 4}; do
        LD_LIBRARY_PATH="$PWD/$libdir:$LD_LIBRARY_PATH" timeout 60 "$BIN/mccl-threads-bench" -r $nr -b 8 -e 256K -f 8 \
          -o allreduce,allgather,broadcast,sendrecv > "$OUT/threads_bench_${lib}_$nr.txt" 2>&1
        LD_LIBRARY_PATH="$PWD/$libdir:$LD_LIBRARY_PATH" MCCL_PROFILE=1 timeout 30 "$BIN/mccl-threads-bench" -r $nr \
          -b 8 -e 8 -o allreduce -G 0 -n 2000 > "$OUT/threads_profile_${lib}_$nr.txt" 2>&1
        echo "== $lib"; cat "$OUT/threads_bench_${lib}_$nr.txt" "$OUT/threads_profile_${lib}_$nr.txt"
      done
    done
    for f in "$OUT"/threads_bench_*.txt "$OUT"/threads_profile_*.txt; do echo "== $(basename "$f")"; cat "$f"; done \
      > "$OUT/threads_bench.txt"
  fi
  # Only tests that allocate and free nothing while a peer's kernel waits: cudaFree and
  # cudaHostAlloc wait for the whole device, so a rank calling one while its peer's kernel
  # waits for this rank's next launch stalls until MCCL_TIMEOUT (not a library fault).
  for run in ${SHARED_RUNS:-2:default 2:LL 2:LL128 3:default}; do
    nr=${run%%:*} proto=${run#*:}
    env=(MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=$((nr > 2 ? 4 : 16)))
    [ "$proto" != default ] && env+=(NCCL_PROTO=$proto)
    env "${env[@]}" timeout 70 "$BIN/mccl_gpu_tests" \
      --gtest_filter='GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.PointToPointPatterns' \
      > "$OUT/gpu_shared_${nr}_$proto.log" 2>&1
    echo "gpu_shared[$nr ranks, $proto]: rc=$? $(grep -aE '^\[ *(OK|PASSED|FAILED) ' "$OUT/gpu_shared_${nr}_$proto.log" | tr '\n' ' ' | cut -c1-400)"
    grep -a -m5 -E 'rank [0-9]+:|Failure|expected' "$OUT/gpu_shared_${nr}_$proto.log" | cut -c1-300
  done
fi

if has nccltests && [ -d "$BIN/nccl-tests" ]; then
  # NVIDIA's nccl-tests built unchanged against mccl (scripts/nccl-tests.sh build), the same
  # binaries on mccl and on NVIDIA's NCCL, nccl-tests' own correctness check on.
  # With one GPU, the two ranks share it (scripts/nccl-tests.sh, NCCL_TESTS_FOLD).
  fold=""; [ "$NGPU" -lt 2 ] && fold="$PWD/$BIN/libmccl_fold_devices.so"
  NCCL_TESTS_FOLD=$fold scripts/nccl-tests.sh run "$BIN/nccl-tests" > "$OUT/nccl_tests.txt" 2>&1
  cp "$BIN"/nccl-tests/*.log "$OUT/" 2>/dev/null
  cat "$OUT/nccl_tests.txt"
fi

if has windows; then
  # Collectives on symmetric windows: the single-process window test at 2 and 3 ranks
  # sharing the GPUs (MCCL_SHARED_GPU, channels capped so every rank's blocks are resident)
  # and, with one rank per GPU, at the GPUs' count; then mccl-threads-bench on window
  # buffers, the direct path (MCCL_WIN_DIRECT=1) against the FIFO path on the same buffers.
  for nr in 2 3; do
    MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr NCCL_MAX_NCHANNELS=16 timeout 300 "$BIN/mccl_gpu_tests" \
      --gtest_filter='*Window*' > "$OUT/windows_tests_$nr.log" 2>&1
    echo "windows tests, $nr ranks shared: rc=$? $(grep -aE '^\[  (PASSED|FAILED) ' "$OUT/windows_tests_$nr.log" | tr '\n' ' ')"
    grep -a -m5 -E 'rank [0-9]+:|Failure|expected' "$OUT/windows_tests_$nr.log" | cut -c1-300
  done
  if [ "$NGPU" -ge 2 ]; then
    timeout 300 "$BIN/mccl_gpu_tests" --gtest_filter='*Window*' > "$OUT/windows_tests_gpus.log" 2>&1
    echo "windows tests, $NGPU GPUs: rc=$? $(grep -aE '^\[  (PASSED|FAILED) ' "$OUT/windows_tests_gpus.log" | tr '\n' ' ')"
  fi
  if [ -x "$BIN/mccl-threads-bench" ]; then
    for direct in 2 1 0; do
      MCCL_WIN_DIRECT=$direct timeout 120 "$BIN/mccl-threads-bench" -r 2 -w -b 8 -e 64M -f 8 -n 100 \
        -o allreduce,allgather,broadcast,reducescatter > "$OUT/windows_bench_direct$direct.txt" 2>&1
      echo "== MCCL_WIN_DIRECT=$direct"; cat "$OUT/windows_bench_direct$direct.txt"
    done
  fi
  # The copy engines (AllGather, Broadcast; NCCL_CTA_POLICY=2): between processes (two
  # sharing one GPU when there is one), and against the SM path with a rank per GPU.
  if [ -x "$BIN/mccl_gpu_mpi_tests" ]; then
    shared=(); [ "$NGPU" -lt 2 ] && shared=(-x MCCL_SHARED_GPU=2)
    timeout 200 $MPIRUN -np 2 "${shared[@]}" -x NCCL_CTA_POLICY=2 "$BIN/mccl_gpu_mpi_tests" \
      --gtest_filter='*SymmetricWindow*' > "$OUT/windows_ce_mpi.log" 2>&1
    echo "windows tests, copy engines, 2 processes: rc=$? $(grep -aE '^\[  (PASSED|FAILED) ' "$OUT/windows_ce_mpi.log" | tr '\n' ' ')"
  fi
  if [ "$NGPU" -ge 2 ] && [ -x "$BIN/mccl-threads-bench" ]; then
    for policy in 0 2; do
      NCCL_CTA_POLICY=$policy timeout 120 "$BIN/mccl-threads-bench" -r "$NGPU" -w -b 1M -e 1G -f 4 -n 20 -G 4 \
        -o allgather,broadcast > "$OUT/windows_bench_policy$policy.txt" 2>&1
      echo "== NCCL_CTA_POLICY=$policy"; cat "$OUT/windows_bench_policy$policy.txt"
    done
  fi
fi

if has osu && [ -d "$BIN/osu" ]; then
  # The OSU Micro-Benchmarks' NCCL benchmarks (scripts/osu.sh build), the same binaries on
  # mccl and on NVIDIA's NCCL; they need a GPU per rank, 2 ranks or more.
  OUT="$OUT" scripts/osu.sh run "$BIN/osu" > "$OUT/osu.txt" 2>&1
  cat "$OUT/osu.txt"
fi

if has launch && [ -x "$BIN/micro_launch_args" ]; then
  timeout 120 "$BIN/micro_launch_args" > "$OUT/launch_args.txt" 2>&1
  cat "$OUT/launch_args.txt"
fi

if has devapi && [ -x "$BIN/mccl_gpu_devapi_tests" ]; then
  # Windows and the device API (LSA pointers and barriers in a user kernel), MPI np 2.
  timeout 200 $MPIRUN -np 2 "$BIN/mccl_gpu_devapi_tests" > "$OUT/gpu_devapi.log" 2>&1
  echo "gpu_devapi: rc=$? $(grep -aE '(PASSED|FAILED) ' "$OUT/gpu_devapi.log" | head -2 | tr '\n' ' ')"
  grep -a -m8 -E 'Failure|expected|rank [0-9]+:' "$OUT/gpu_devapi.log" | cut -c1-300
fi

if has memory; then
  # What a kernel's stack costs, and each library's GPU memory after init, after a run and
  # after destroy (the same program, mccl-perf against nccl-perf).
  { "$BIN/micro_stack_reserve" 0 1024 2048 4096 8192
    for lib in mccl nccl; do
      timeout 120 $MPIRUN -np "$NGPU" "$BIN/$lib-perf" -b 8 -e 1G -f 1024 -o allreduce,allgather,sendrecv -t 1 -c 0 --memory \
        2>/dev/null | grep -E '^# (memory|mccl)' | sed "s/^/$lib: /"
    done
    grep -ah '\[memory\]' "$OUT"/gpu_mpi_*.log 2>/dev/null; } > "$OUT/memory.txt" 2>&1
  cat "$OUT/memory.txt"
fi

if has init; then
  # GPU communicators made and destroyed: mccl against NCCL, the same harness.
  for lib in mccl nccl; do
    timeout 120 $MPIRUN -np "$NGPU" "$BIN/$lib-init-bench" 5 --gpu > "$OUT/init_$lib.txt" 2>&1
  done
  cat "$OUT"/init_*.txt > "$OUT/init.txt"
  cat "$OUT/init.txt"
fi

perf() {  # perf NAME LIB ARGS... (env from the caller)
  local name=$1 lib=$2
  shift 2
  timeout 300 $MPIRUN $PERF_X -np "$NGPU" "$BIN/$lib-perf" "$@" --csv "$OUT/$name.csv" > "$OUT/$name.txt" 2> "$OUT/$name.err"
  local rc=$?
  [ $rc -ne 0 ] && { echo "$name: rc=$rc"; tail -3 "$OUT/$name.err"; }
}
PERF_X=""

if has perf; then
  for lib in mccl nccl; do perf perf_$lib $lib -b 8 -e 2G -f 4 -o all -t 3; done
  python3 scripts/ratio_table.py "$OUT/perf_mccl.csv" "$OUT/perf_nccl.csv" > "$OUT/ratio.md"
fi
if has channels; then
  # Blocks (SMs) per collective and size, mccl next to NCCL, from what each prints at
  # NCCL_DEBUG_SUBSYS=TUNING (one timed call a size).
  for lib in mccl nccl; do
    PERF_X="-x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=TUNING" perf channels_$lib $lib -b 8 -e 2G -f 4 -o all -n 1 -w 0 -t 1 -c 0
  done
  PERF_X=""
  python3 scripts/channels_table.py "$OUT/channels_mccl.txt" "$OUT/channels_nccl.txt" > "$OUT/channels.md"
  cat "$OUT/channels.md"
fi
if has graph; then
  for lib in mccl nccl; do perf graph_$lib $lib -b 8 -e 4M -f 8 -o allreduce,allgather,broadcast,sendrecv -G 10 -t 3; done
  python3 scripts/ratio_table.py "$OUT/graph_mccl.csv" "$OUT/graph_nccl.csv" > "$OUT/ratio_graph.md"
fi

if has modes; then
  # MODES_MAX: the largest eager size (2G); MODES_OPS: the collectives (all).
  mops=${MODES_OPS:-all}
  for lib in mccl nccl; do
    for r in 0 1 2; do
      perf modes_${lib}_R$r $lib -b 8 -e "${MODES_MAX:-2G}" -f 4 -o "$mops" -t 3 -R $r
      perf modes_${lib}_R${r}_graph $lib -b 8 -e 1M -f 8 -o "$mops" -t 3 -G 10 -R $r -c 0
    done
    PERF_X="-x NCCL_CTA_POLICY=2" perf modes_${lib}_R2_ce $lib -b 8 -e "${MODES_MAX:-2G}" -f 4 \
      -o allgather,broadcast,alltoall,gather,scatter,sendrecv -t 3 -R 2 -c 0
    PERF_X=""
  done
  python3 scripts/modes_table.py "$OUT" > "$OUT/modes.md"
  cat "$OUT/modes.md"
fi

if has knobab; then
  # The choices made on one shared GPU, against their off values on two or more GPUs with
  # NCCL alongside (two rounds): a rank's copies to itself on the copy engines
  # (MCCL_SELF_COPY_ENGINE_BYTES, 8 MiB), the plain-buffer direct band (MCCL_PLAIN_DIRECT;
  # 2026-12-03c: ReduceScatter and AllGather from 1 MiB whole), and LL collectives on NCCL's
  # 24 channels against 32 (MCCL_LL_MAX_CHANNELS; 2026-12-04: 0.2-0.8 us more a call at
  # 128-512 KiB on one shared GPU), eager and in graphs.
  for round in 1 2; do
    perf knobab_ll24_r$round mccl -b 64K -e 1M -f 2 -o allreduce,reducescatter,allgather,broadcast,reduce -t 3
    perf knobab_ll24g_r$round mccl -b 64K -e 1M -f 2 -o allreduce,reducescatter,allgather,broadcast,reduce -t 3 -G 20
    PERF_X="-x MCCL_LL_MAX_CHANNELS=32" perf knobab_ll32_r$round mccl -b 64K -e 1M -f 2 \
      -o allreduce,reducescatter,allgather,broadcast,reduce -t 3
    PERF_X="-x MCCL_LL_MAX_CHANNELS=32" perf knobab_ll32g_r$round mccl -b 64K -e 1M -f 2 \
      -o allreduce,reducescatter,allgather,broadcast,reduce -t 3 -G 20
    PERF_X=""
    perf knobab_nccl_ll_r$round nccl -b 64K -e 1M -f 2 -o allreduce,reducescatter,allgather,broadcast,reduce -t 3
    perf knobab_nccl_llg_r$round nccl -b 64K -e 1M -f 2 -o allreduce,reducescatter,allgather,broadcast,reduce -t 3 -G 20
    perf knobab_selfce_r$round mccl -b 1M -e 2G -f 4 -o alltoall,gather,scatter -t 3
    PERF_X="-x MCCL_SELF_COPY_ENGINE_BYTES=0" perf knobab_selfkernel_r$round mccl -b 1M -e 2G -f 4 \
      -o alltoall,gather,scatter -t 3
    PERF_X=""
    perf knobab_nccl_p2p_r$round nccl -b 1M -e 2G -f 4 -o alltoall,gather,scatter -t 3
    perf knobab_band_r$round mccl -b 256K -e 16M -f 2 -o allreduce,reducescatter,allgather -t 3
    PERF_X="-x MCCL_PLAIN_DIRECT=0" perf knobab_fifo_r$round mccl -b 256K -e 16M -f 2 \
      -o allreduce,reducescatter,allgather -t 3
    PERF_X=""
    perf knobab_nccl_band_r$round nccl -b 256K -e 16M -f 2 -o allreduce,reducescatter,allgather -t 3
    # A user's Send/Recv on the copy engines (MCCL_P2P_CE_MIN_BYTES, off by default until
    # this measures it; 2026-12-05c), against the SMs and NCCL, plain and windows.
    for R in 0 2; do
      PERF_X="-x MCCL_P2P_CE_MIN_BYTES=1M" perf knobab_p2pce_R${R}_r$round mccl -b 1M -e 2G -f 4 -o sendrecv -t 3 -R $R
      PERF_X=""
      perf knobab_p2psm_R${R}_r$round mccl -b 1M -e 2G -f 4 -o sendrecv -t 3 -R $R
      perf knobab_nccl_p2pR${R}_r$round nccl -b 1M -e 2G -f 4 -o sendrecv -t 3 -R $R
    done
    # AllGather, Broadcast, AlltoAll, Gather, Scatter on plain and registered buffers on the
    # copy engines (MCCL_PLAIN_CE_MIN_BYTES, off by default until this measures it;
    # 2026-12-05d), against the SMs and NCCL's best modes (plain, registered, and the copy
    # engines on windows under NCCL_CTA_POLICY=2).
    for R in 0 1; do
      PERF_X="-x MCCL_PLAIN_CE_MIN_BYTES=1M" perf knobab_collce_R${R}_r$round mccl -b 1M -e 2G -f 4 \
        -o allgather,broadcast,alltoall,gather,scatter -t 3 -R $R
      PERF_X=""
      perf knobab_collsm_R${R}_r$round mccl -b 1M -e 2G -f 4 -o allgather,broadcast,alltoall,gather,scatter -t 3 -R $R
      perf knobab_nccl_collR${R}_r$round nccl -b 1M -e 2G -f 4 -o allgather,broadcast,alltoall,gather,scatter -t 3 -R $R
    done
    PERF_X="-x NCCL_CTA_POLICY=2" perf knobab_nccl_collzero_r$round nccl -b 1M -e 2G -f 4 \
      -o allgather,broadcast,alltoall,gather,scatter -t 3 -R 2
    # The direct kernels on symmetric windows take up to 32 blocks (32 KiB of the whole a
    # block), NCCL's symmetric kernels 3-9 (gpu-2xH200-2026-11-26c channels.md): what 8 cost.
    PERF_X="-x NCCL_MAX_NCHANNELS=8" perf knobab_win8_r$round mccl -b 256K -e 64M -f 2 \
      -o allreduce,reducescatter,allgather,broadcast -t 3 -R 2
    PERF_X=""
    perf knobab_win32_r$round mccl -b 256K -e 64M -f 2 -o allreduce,reducescatter,allgather,broadcast -t 3 -R 2
    perf knobab_nccl_win_r$round nccl -b 256K -e 64M -f 2 -o allreduce,reducescatter,allgather,broadcast -t 3 -R 2
  done
  for c in selfce selfkernel nccl_p2p band fifo nccl_band ll24 ll32 nccl_ll ll24g ll32g nccl_llg p2pce_R0 p2psm_R0 \
      nccl_p2pR0 p2pce_R2 p2psm_R2 nccl_p2pR2 collce_R0 collsm_R0 nccl_collR0 collce_R1 collsm_R1 nccl_collR1 \
      nccl_collzero win8 win32 nccl_win; do
    echo "== $c"; cat "$OUT"/knobab_${c}_r*.csv 2>/dev/null | sort -u
  done > "$OUT/knobab.txt"
  cat "$OUT/knobab.txt"
fi

if has llsweep; then
  # LL: channels x threads over the sizes where it is a candidate.
  # LL_THREADS, LL_OPS, LL_MIN, LL_MAX, LL_F narrow it.
  llargs=(-b "${LL_MIN:-4K}" -e "${LL_MAX:-16M}" -f "${LL_F:-4}" -o "${LL_OPS:-allreduce,allgather,sendrecv,reducescatter}"
          -t 1 -c 0)
  for th in ${LL_THREADS:-256 512}; do
    for ch in 1 2 4 8 16 32; do
      PERF_X="-x NCCL_PROTO=LL -x NCCL_MIN_NCHANNELS=$ch -x NCCL_MAX_NCHANNELS=$ch -x NCCL_NTHREADS=$th" \
        perf ll_t${th}_c${ch} mccl "${llargs[@]}"
    done
  done
  PERF_X=""
  # mccl's default and NCCL over the same sizes, in the same call.
  for lib in mccl nccl; do perf ll_$lib $lib "${llargs[@]}"; done
  python3 - "$OUT" <<'EOF' > "$OUT/llsweep.md"
import csv, glob, os, re, sys
out = sys.argv[1]
rows = {}
for f in glob.glob(os.path.join(out, "ll_t*_c*.csv")):
    m = re.search(r"ll_t(\d+)_c(\d+)", f)
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["op"], int(r["bytes"])), {})[(int(m[1]), int(m[2]))] = float(r["time_us"])
cfgs = sorted({c for v in rows.values() for c in v})
ref = {}
for lib in ("mccl", "nccl"):
    f = os.path.join(out, f"ll_{lib}.csv")
    if os.path.exists(f):
        for r in csv.DictReader(open(f)):
            ref.setdefault((r["op"], int(r["bytes"])), {})[lib] = float(r["time_us"])
print("LL time (us) by threads/channels; mccl's default and NCCL in the same call\n")
print("| op | bytes | " + " | ".join(f"t{t}c{c}" for t, c in cfgs) + " | best | default | nccl |")
print("|---|---:|" + "---:|" * (len(cfgs) + 3))
for k in sorted(rows):
    v = rows[k]
    best = min(v, key=v.get)
    d = ref.get(k, {})
    print(f"| {k[0]} | {k[1]} | " + " | ".join(f"{v.get(c, float('nan')):.1f}" for c in cfgs) + f" | t{best[0]}c{best[1]} | "
          + " | ".join(f"{d[x]:.1f}" if x in d else "" for x in ("mccl", "nccl")) + " |")
EOF
fi

if has protosweep; then
  # Each protocol forced over the middle sizes, NCCL (its own choice) and mccl's default
  # alongside; then LL128's channels. One table: time per protocol, mccl's best against NCCL.
  OPS=allreduce,allgather,reducescatter,broadcast,reduce,sendrecv,alltoall
  for p in LL LL128 Simple; do
    PERF_X="-x NCCL_PROTO=$p" perf proto_$p mccl -b 16K -e 32M -f 2 -o $OPS -t 1 -c 0
  done
  PERF_X=""
  perf proto_nccl nccl -b 16K -e 32M -f 2 -o $OPS -t 1 -c 0
  perf proto_default mccl -b 16K -e 32M -f 2 -o $OPS -t 1 -c 0
  for ch in 8 16 32; do
    PERF_X="-x NCCL_PROTO=LL128 -x NCCL_MIN_NCHANNELS=$ch -x NCCL_MAX_NCHANNELS=$ch" \
      perf proto_LL128c$ch mccl -b 64K -e 32M -f 4 -o allreduce,allgather,reducescatter,sendrecv -t 1 -c 0
  done
  # The reductions where NCCL leads (512 KiB - 4 MiB): does LL gain from more channels, or
  # Simple from fewer (its fixed cost per step)?
  for ch in 32 64; do
    PERF_X="-x NCCL_PROTO=LL -x NCCL_MIN_NCHANNELS=$ch -x NCCL_MAX_NCHANNELS=$ch" \
      perf proto_LLc$ch mccl -b 256K -e 4M -f 2 -o allreduce,reducescatter,reduce -t 1 -c 0
  done
  # Simple at fewer channels where it meets LL128 (256 KiB - 8 MiB): its fixed cost per
  # block-step is what decides the crossover.
  for ch in 8 16 32; do
    PERF_X="-x NCCL_PROTO=Simple -x NCCL_MIN_NCHANNELS=$ch -x NCCL_MAX_NCHANNELS=$ch" \
      perf proto_Simplec$ch mccl -b 256K -e 8M -f 2 -o $OPS -t 1 -c 0
  done
  PERF_X=""
  python3 - "$OUT" <<'EOF' > "$OUT/protosweep.md"
import csv, glob, os, re, sys
out = sys.argv[1]
rows, cols = {}, []
for f in sorted(glob.glob(os.path.join(out, "proto_*.csv"))):
    name = re.search(r"proto_(.*)\.csv", f)[1]
    cols.append(name)
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["op"], int(r["bytes"])), {})[name] = float(r["time_us"])
print("time (us) per protocol forced (mccl), mccl default, NCCL 2.28.3 (its choice), same call\n")
print("| op | bytes | " + " | ".join(cols) + " | best mccl | nccl/best | nccl/default |")
print("|---|---:|" + "---:|" * (len(cols) + 3))
for k in sorted(rows):
    v = rows[k]
    m = {c: t for c, t in v.items() if c != "nccl"}
    best = min(m, key=m.get) if m else "-"
    ratio = v["nccl"] / m[best] if m and "nccl" in v else float("nan")
    rdef = v["nccl"] / v["default"] if "nccl" in v and "default" in v else float("nan")
    print(f"| {k[0]} | {k[1]} | " + " | ".join(f"{v[c]:.1f}" if c in v else "" for c in cols) + f" | {best} | {ratio:.2f} | {rdef:.2f} |")
EOF
  cat "$OUT/protosweep.md"
fi

if has units; then
  # Simple with units (DevWork::units): the tests that run them (small FIFOs and few
  # channels make many units of moderate calls), single process and MPI np 2.
  UENV=(NCCL_PROTO=Simple NCCL_BUFFSIZE=65536 NCCL_MAX_NCHANNELS=2)
  timeout 300 "$BIN/mccl_gpu_tests" --gtest_filter='GpuSingleProcess.SimpleUnits*:GpuSingleProcess.SimpleKernelsAndGeneric*:GpuSingleProcess.LargeBuffers' \
    > "$OUT/units_single.log" 2>&1
  echo "units single (own env): rc=$? $(grep -aE '^\[  (PASSED|FAILED) ' "$OUT/units_single.log" | tr '\n' ' ')"
  grep -a -m8 -E 'rank [0-9]+:|Failure|expected|FAILED' "$OUT/units_single.log" | cut -c1-300
  env "${UENV[@]}" timeout 300 "$BIN/mccl_gpu_tests" \
    --gtest_filter='GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.GraphCapture*:GpuSingleProcess.TwoCommunicators*:GpuSingleProcess.OneThreadGroups*:GpuSingleProcess.LoneCalls*' \
    > "$OUT/units_forced.log" 2>&1
  echo "units single (forced): rc=$? $(grep -aE '^\[  (PASSED|FAILED) ' "$OUT/units_forced.log" | tr '\n' ' ')"
  grep -a -m8 -E 'rank [0-9]+:|Failure|expected|FAILED' "$OUT/units_forced.log" | cut -c1-300
  env "${UENV[@]}" MCCL_TEST_QUICK=1 timeout 200 $MPIRUN -x NCCL_PROTO -x NCCL_BUFFSIZE -x NCCL_MAX_NCHANNELS -x MCCL_TEST_QUICK \
    -np "$NGPU" "$BIN/mccl_gpu_mpi_tests" > "$OUT/units_mpi.log" 2>&1
  echo "units mpi (forced): rc=$? $(grep -aE '(PASSED|FAILED) ' "$OUT/units_mpi.log" | head -2 | tr '\n' ' ')"
  grep -a -m5 -E 'Failure|expected' "$OUT/units_mpi.log" | cut -c1-300
fi
if has unitsweep; then
  # Units on and off at forced channel counts (UNIT_CH), Simple, 8 MiB - 2 GiB; mccl's
  # default and NCCL alongside. One table: time per configuration.
  OPS=allreduce,allgather,reducescatter,broadcast,reduce
  # UNIT_CFG: channels:units[:NCCL_BUFFSIZE] (4 slots a FIFO: a step is a quarter of it).
  for cfg in ${UNIT_CFG:-16:0 16:1 24:0 24:1 32:0 32:1 64:0 64:1}; do
    IFS=: read -r ch u buff <<< "$cfg"
    PERF_X="-x NCCL_PROTO=Simple -x NCCL_MIN_NCHANNELS=$ch -x NCCL_MAX_NCHANNELS=$ch -x MCCL_SIMPLE_UNITS=$u"
    name=c${ch}u$u
    [ -n "$buff" ] && { PERF_X="$PERF_X -x NCCL_BUFFSIZE=$buff"; name=${name}b$((buff >> 10))k; }
    perf unit_$name mccl -b 8M -e 2G -f 4 -o $OPS -t 3 -c 0
  done
  PERF_X=""
  perf unit_default mccl -b 8M -e 2G -f 4 -o $OPS -t 3 -c 0
  perf unit_nccl nccl -b 8M -e 2G -f 4 -o $OPS -t 3 -c 0
  python3 - "$OUT" <<'PYEOF' > "$OUT/unitsweep.md"
import csv, glob, os, re, sys
out = sys.argv[1]
rows, names = {}, []
for f in glob.glob(os.path.join(out, "unit_*.csv")):
    name = re.search(r"unit_(.*)\.csv", f)[1]
    names.append(name)
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["op"], int(r["bytes"])), {})[name] = float(r["time_us"])
forced = sorted([n for n in names if n.startswith("c")], key=lambda n: (int(re.match(r"c(\d+)", n)[1]), n))
order = forced + [n for n in ("default", "nccl") if n in names]
print("Simple, time (us): cNuU = N channels forced, units off (u0) / on (u1); default = mccl's choice; nccl = NCCL 2.28.3; same call\n")
print("| op | bytes | " + " | ".join(order) + " | nccl/best u1 | fewest u1 channels within 3% of nccl |")
print("|---|---:|" + "---:|" * (len(order) + 2))
for k in sorted(rows):
    v = rows[k]
    u1 = {n: v[n] for n in forced if "u1" in n and n in v}
    best = min(u1.values()) if u1 else float("nan")
    ok = [int(re.match(r"c(\d+)", n)[1]) for n, t in u1.items() if "nccl" in v and t <= v["nccl"] * 1.03]
    cells = [f"{v[n]:.1f}" if n in v else "" for n in order]
    r = v["nccl"] / best if "nccl" in v and u1 else float("nan")
    print(f"| {k[0]} | {k[1]} | " + " | ".join(cells) + f" | {r:.2f} | {min(ok) if ok else '-'} |")
PYEOF
  cat "$OUT/unitsweep.md"
fi
if has mpitiny && [ "$NGPU" -ge 2 ] && [ -x "$BIN/micro_mpi_tiny" ]; then
  # Ways to complete an 8-byte MPI_Allreduce on device buffers (bench/micro/mpi_tiny.cu):
  # the kernel path of libmccl_mpi, staging through pinned host memory, a mapped kernel.
  timeout 120 $MPIRUN -np 2 "$BIN/micro_mpi_tiny" > "$OUT/mpi_tiny.txt" 2>&1
  cat "$OUT/mpi_tiny.txt"
fi
if has pipesweep; then
  # Simple at NCCL's channel count (PIPE_CH, default 24): what the FIFO's depth, slot size,
  # flags per slot and threads per block do to the large sizes, mccl's default (its own
  # channels) and NCCL alongside; then MCCL_PROFILE at that count (wait against move).
  ch=${PIPE_CH:-24}
  OPS=allreduce,allgather,reducescatter,broadcast
  for cfg in base "sl2:MCCL_GPU_SLICES=2" "sl4:MCCL_GPU_SLICES=4" "s8:MCCL_FIFO_SLOTS=8" \
             "s8b8:MCCL_FIFO_SLOTS=8 NCCL_BUFFSIZE=8388608" "s2b2:MCCL_FIFO_SLOTS=2 NCCL_BUFFSIZE=2097152" \
             "b16:NCCL_BUFFSIZE=16777216" "t256:NCCL_NTHREADS=256" \
             "sl2s8b8:MCCL_GPU_SLICES=2 MCCL_FIFO_SLOTS=8 NCCL_BUFFSIZE=8388608"; do
    name=${cfg%%:*}; envs=""; [ "$cfg" != "$name" ] && envs=${cfg#*:}
    PERF_X="-x NCCL_PROTO=Simple -x NCCL_MIN_NCHANNELS=$ch -x NCCL_MAX_NCHANNELS=$ch"
    for e in $envs; do PERF_X="$PERF_X -x $e"; done
    perf pipe_$name mccl -b 32M -e 2G -f 4 -o $OPS -t 3 -c 0
  done
  PERF_X=""
  perf pipe_default mccl -b 32M -e 2G -f 4 -o $OPS -t 3 -c 0
  perf pipe_nccl nccl -b 32M -e 2G -f 4 -o $OPS -t 3 -c 0
  python3 - "$OUT" "$ch" <<'PYEOF' > "$OUT/pipesweep.md"
import csv, glob, os, re, sys
out, ch = sys.argv[1], sys.argv[2]
rows, names = {}, []
for f in sorted(glob.glob(os.path.join(out, "pipe_*.csv"))):
    name = re.search(r"pipe_(.*)\.csv", f)[1]
    names.append(name)
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["op"], int(r["bytes"])), {})[name] = float(r["time_us"])
order = ["base"] + [n for n in names if n not in ("base", "default", "nccl")] + ["default", "nccl"]
order = [n for n in order if n in names]
print(f"Simple at {ch} channels: time (us) per FIFO configuration; default = mccl's own choice, nccl = NCCL 2.28.3; same call\n")
print("| op | bytes | " + " | ".join(order) + " | nccl/base | nccl/best forced |")
print("|---|---:|" + "---:|" * (len(order) + 2))
for k in sorted(rows):
    v = rows[k]
    forced = [v[n] for n in order if n in v and n not in ("default", "nccl")]
    cells = [f"{v[n]:.1f}" if n in v else "" for n in order]
    rb = v["nccl"] / v["base"] if "nccl" in v and "base" in v else float("nan")
    rf = v["nccl"] / min(forced) if "nccl" in v and forced else float("nan")
    print(f"| {k[0]} | {k[1]} | " + " | ".join(cells) + f" | {rb:.2f} | {rf:.2f} |")
PYEOF
  cat "$OUT/pipesweep.md"
fi
if has chprofile; then
  # MCCL_PROFILE of Simple at PROF_CH channel counts (16 24 64), 1 GiB: per step wait and
  # move, every block's run time, and the last launch's channels (start, end, SM).
  for ch in ${PROF_CH:-16 24 64}; do
    for op in ${PROF_OPS:-broadcast allreduce}; do
      PERF_X="-x NCCL_PROTO=Simple -x NCCL_MIN_NCHANNELS=$ch -x NCCL_MAX_NCHANNELS=$ch -x MCCL_PROFILE=1" \
        perf chprof_${op}_$ch mccl -b 1G -e 1G -o $op -t 1 -c 0
      { echo "== $op 1G at $ch channels"; grep -E '^ +[0-9]' "$OUT/chprof_${op}_$ch.txt"; grep -h 'mccl profile' "$OUT/chprof_${op}_$ch.err"; } >> "$OUT/chprofile.txt"
    done
  done
  PERF_X=""
  cat "$OUT/chprofile.txt"
fi
if has chsweep; then
  # Simple's channels (blocks, SMs) at large sizes: each count forced, mccl's default and
  # NCCL (its own choice) in the same call. One table: time per count, the fewest channels
  # within 3 % of mccl's best, and NCCL against that best (issue 13: no more SMs than NCCL).
  OPS=allreduce,allgather,reducescatter,broadcast,sendrecv,alltoall
  for ch in ${CH_COUNTS:-8 16 24 32 64}; do
    PERF_X="-x NCCL_PROTO=Simple -x NCCL_MIN_NCHANNELS=$ch -x NCCL_MAX_NCHANNELS=$ch" \
      perf ch_c$ch mccl -b ${CH_MIN:-2M} -e 2G -f 4 -o $OPS -t 1 -c 0
  done
  PERF_X=""
  perf ch_default mccl -b ${CH_MIN:-2M} -e 2G -f 4 -o $OPS -t 1 -c 0
  perf ch_nccl nccl -b ${CH_MIN:-2M} -e 2G -f 4 -o $OPS -t 1 -c 0
  python3 - "$OUT" <<'PYEOF' > "$OUT/chsweep.md"
import csv, glob, os, re, sys
out = sys.argv[1]
rows, counts = {}, []
for f in glob.glob(os.path.join(out, "ch_*.csv")):
    name = re.search(r"ch_(.*)\.csv", f)[1]
    if name.startswith("c"):
        counts.append(int(name[1:]))
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["op"], int(r["bytes"])), {})[name] = float(r["time_us"])
counts.sort()
cols = [f"c{c}" for c in counts]
print("Simple, time (us) by channels forced (mccl), mccl default, NCCL 2.28.3 (its choice), same call\n")
print("| op | bytes | " + " | ".join(cols) + " | default | nccl | fewest within 3% | nccl/that |")
print("|---|---:|" + "---:|" * (len(cols) + 4))
for k in sorted(rows):
    v = rows[k]
    forced = {c: v[f"c{c}"] for c in counts if f"c{c}" in v}
    if not forced:
        continue
    best = min(forced.values())
    few = min(c for c, t in forced.items() if t <= best * 1.03)
    ratio = v["nccl"] / forced[few] if "nccl" in v else float("nan")
    cells = " | ".join(f"{v[c]:.1f}" if c in v else "" for c in cols + ["default", "nccl"])
    print(f"| {k[0]} | {k[1]} | {cells} | {few} | {ratio:.2f} |")
PYEOF
  cat "$OUT/chsweep.md"
fi

if has hoststall; then
  # A host time per call as long as the kernel's (AllGather 8-128 MiB after the other
  # collectives of "-o all", 2026-11-25): the same order again, with MCCL_PROFILE's host
  # phases, then AllGather alone.
  PERF_X="-x MCCL_PROFILE=1" perf stall_all mccl -b 2M -e 2G -f 4 -o allreduce,broadcast,reduce,allgather -t 2
  PERF_X="-x MCCL_PROFILE=1" perf stall_ag mccl -b 2M -e 128M -f 4 -o allgather -t 2
  PERF_X=""
  for f in stall_all stall_ag; do echo "== $f"; cat "$OUT/$f.csv"; grep -h 'mccl profile' "$OUT/$f.err" | grep -v 'block-steps' | head -8; done \
    > "$OUT/hoststall.txt"
  cat "$OUT/hoststall.txt"
fi

if has profile; then
  # Where the time goes: host phases and each protocol's per-step phases (MCCL_PROFILE),
  # one size per run so the averages belong to it.
  for spec in allreduce:8 allreduce:64K allreduce:1M allreduce:32M allreduce:1G sendrecv:8 sendrecv:1G reduce:1G \
              allgather:1G; do
    op=${spec%%:*} sz=${spec#*:}
    PERF_X="-x MCCL_PROFILE=1" perf prof_${op}_$sz mccl -b $sz -e $sz -o $op -t 1 -c 0
    { echo "== $op $sz"; grep -E '^ +[0-9]' "$OUT/prof_${op}_$sz.txt"; grep -h 'mccl profile' "$OUT/prof_${op}_$sz.err"; } >> "$OUT/profile.txt"
  done
  PERF_X=""
  cat "$OUT/profile.txt"
fi

if has fifosweep; then
  # Simple: bytes per post (NCCL_BUFFSIZE / MCCL_FIFO_SLOTS) and channels, mid to large sizes.
  for ch in 32 64; do
    for geo in 8:4M 4:4M 8:8M; do
      sl=${geo%%:*} buf=${geo#*:}
      PERF_X="-x NCCL_PROTO=Simple -x NCCL_MIN_NCHANNELS=$ch -x NCCL_MAX_NCHANNELS=$ch -x NCCL_BUFFSIZE=$buf -x MCCL_FIFO_SLOTS=$sl" \
        perf fifo_c${ch}_s${sl}_b${buf} mccl -b 8M -e 1G -f 4 -o allreduce,sendrecv -t 1 -c 0
    done
  done
  PERF_X=""
  grep -H -E '^ +[0-9]' "$OUT"/fifo_*.txt | sed "s#$OUT/##" > "$OUT/fifosweep.txt"
  # LL at the top of its range, after pipelining.
  for ch in 16 32; do
    PERF_X="-x NCCL_PROTO=LL -x NCCL_MIN_NCHANNELS=$ch -x NCCL_MAX_NCHANNELS=$ch" \
      perf llbig_c${ch} mccl -b 256K -e 16M -f 4 -o allreduce,allgather,sendrecv,reducescatter -t 1 -c 0
  done
  PERF_X=""
  grep -H -E '^ +[0-9]' "$OUT"/llbig_*.txt | sed "s#$OUT/##" >> "$OUT/fifosweep.txt"
  cat "$OUT/fifosweep.txt"
fi

if has simplesweep; then
  # Simple: channels x FIFO geometry at large sizes.
  for ch in 16 32 64; do
    for buf in 1M 4M; do
      for sl in 1 4; do
        PERF_X="-x NCCL_PROTO=Simple -x NCCL_MIN_NCHANNELS=$ch -x NCCL_MAX_NCHANNELS=$ch -x NCCL_BUFFSIZE=$buf -x MCCL_GPU_SLICES=$sl" \
          perf simple_c${ch}_b${buf}_s${sl} mccl -b 32M -e 1G -f 32 -o allreduce,sendrecv,reduce -t 1 -c 0
      done
    done
  done
  PERF_X="-x NCCL_PROTO=Simple -x NCCL_NTHREADS=256" perf simple_t256 mccl -b 32M -e 1G -f 32 -o allreduce,sendrecv,reduce -t 1 -c 0
  PERF_X=""
  grep -H -E '^ +[0-9]' "$OUT"/simple_*.txt | sed "s#$OUT/##" > "$OUT/simplesweep.txt"
fi

tar -C "$OUT" -czf "$FINAL/logs.tgz" . 2>/dev/null
for f in modes.md unitsweep.md mpi_tiny.txt pipesweep.md chprofile.txt hoststall.txt ratio.md ratio_graph.md chsweep.md channels.md protosweep.md llsweep.md simplesweep.txt micro_latency.txt profile.txt fifosweep.txt memory.txt init.txt threads_bench.txt launch_args.txt nccl_tests.txt windows_bench_direct2.txt windows_bench_direct1.txt windows_bench_direct0.txt osu.txt protos.txt; do [ -f "$OUT/$f" ] && cp "$OUT/$f" "$FINAL/"; done
[ -f "$OUT/ratio.md" ] && { echo "== eager"; cat "$OUT/ratio.md"; }
[ -f "$OUT/ratio_graph.md" ] && { echo "== graph"; cat "$OUT/ratio_graph.md"; }
[ -f "$OUT/llsweep.md" ] && cat "$OUT/llsweep.md"
[ -f "$OUT/simplesweep.txt" ] && cat "$OUT/simplesweep.txt"
exit 0
