#!/usr/bin/env bash
# Call 1 (one H200): the copy engines' copy within one GPU against the SMs
# (bench/micro/ce_copy.cu); Gather on symmetric windows by the copy engines under the zero-CTA
# policy, and the harness's in-place Gather now laid out alike on every rank. The
# single-process GPU tests on 2 ranks as threads sharing the GPU (all but the 80-rank one),
# on 3 ranks the window, AlltoAll-family and Gather tests; then the MPI GPU tests on two
# processes sharing the GPU (MCCL_SHARED_GPU=2: their windows are CUDA IPC mappings, so the
# copy engines move AlltoAll and Gather blocks between them): the window tests under
# NCCL_CTA_POLICY=2 and under MCCL_WIN_CE_MIN_BYTES=4096 (AlltoAll only), and the
# collective tests at the default.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
# A copy within the GPU by the copy engines against the SMs; a same-device copy beside a
# spinning kernel of the same context (bench/micro/ce_copy.cu).
timeout 60 $B/micro_ce_copy > $W/ce_copy.txt 2>&1
echo "micro_ce_copy: rc=$?" >> $T
cat $W/ce_copy.txt >> $T
F3='GpuSingleProcess.*Window*:GpuSingleProcess.AlltoAll*:GpuSingleProcess.OneThreadGather*:GpuSingleProcess.SimpleUnitsEveryCollectiveTypeAndForm:GpuSingleProcess.PointToPointPatterns'
for run in "2:GpuSingleProcess.*-GpuSingleProcess.ConnectionTableMemoryFollowsConnectedPeers" "3:$F3"; do
  nr=${run%%:*} f=${run#*:}
  gtests $nr "$f" $((nr > 2 ? 150 : 240))
done
for cfg in "ce NCCL_CTA_POLICY=2" "size MCCL_WIN_CE_MIN_BYTES=4096" "plain MCCL_WIN_CE_MIN_BYTES=33554432"; do
  set -- $cfg
  name=$1; shift
  f='GpuMpi.SymmetricWindow*'; [ $name = plain ] && f='GpuMpi.SymmetricWindow*:GpuMpi.CollectivesFromMpiComm'
  timeout 200 $M -x MCCL_SHARED_GPU=2 -x MCCL_TEST_QUICK=1 -x "$1" -x MCCL_DUMP_SCHEDULE=0 $B/mccl_gpu_mpi_tests \
    --gtest_filter="$f" > $W/mpi_$name.log 2>&1
  res "mpi np2 shared $name" $? $W/mpi_$name.log
  grep -aE '^\[ +(OK|FAILED|SKIPPED) ' $W/mpi_$name.log >> $T
done
# Which path a Gather of 1 MiB blocks on windows takes between the two processes, from the
# schedule dump (rank 0 is the root): under the policy the copy engines, else the FIFOs.
for pol in 2 0; do
  timeout 60 $M -x MCCL_SHARED_GPU=2 -x NCCL_CTA_POLICY=$pol -x MCCL_DUMP_SCHEDULE=1 $B/mccl-perf -R 2 -o gather,scatter \
    -b 1M -e 1M -n 3 -w 1 > $W/dump_policy$pol.log 2>&1
  echo "policy $pol: rc=$? copy-engine lines: $(grep -ac 'on symmetric windows (copy engines)' $W/dump_policy$pol.log)" >> $T
  grep -a -m6 -E 'Gather|Scatter' $W/dump_policy$pol.log | cut -c1-200 >> $T
done
finish call1
