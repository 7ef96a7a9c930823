#!/usr/bin/env bash
# Call 2 (one H200): the completion word (core/completion.h). The unit tests of the wait;
# the single-process GPU tests on 2 ranks sharing the GPU (DevComm grew by a pointer: every
# kernel changed); the preload's new test (every small collective returns with its own
# result) on two processes sharing the GPU; micro_word_wait (an AllReduce then a wait, ranks
# as threads) three rounds; micro_mpi_tiny np 1 (the route on one rank: the copy, no word);
# against the build before (ab/old), interleaved, two rounds: LL sizes eager and in graphs
# (every LL kernel's end reads the new field).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
ln -sfn ab/old $B/old
timeout 60 $B/mccl_unit_tests --gtest_filter='Completion.*' > $W/unit.log 2>&1
res "unit Completion" $? $W/unit.log
MCCL_SHARED_GPU=2 timeout 240 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 2 -x MCCL_SHARED_GPU \
  -x MCCL_TIMEOUT -x LD_LIBRARY_PATH=$L $B/mccl_preload_gpu_tests --gtest_filter='PreloadGpu.SmallCalls*' > $W/preload.log 2>&1
res "preload np 2 sharing the GPU" $? $W/preload.log
for r in 1 2 3; do
  timeout 120 $B/micro_word_wait 2 2000 2,256,16384 > $W/word_$r.txt 2>&1 || echo "word $r rc=$?" >> $W/errors.txt
done
timeout 120 mpirun --allow-run-as-root -np 1 -x LD_LIBRARY_PATH=$L $B/micro_mpi_tiny 2000 > $W/tiny_np1.txt 2>&1
gtests 2 "GpuSingleProcess.*-GpuSingleProcess.ConnectionTableMemoryFollowsConnectedPeers" 240
OPS=allreduce,reducescatter,allgather,broadcast,sendrecv,alltoall
for r in 1 2; do
  for v in old new; do
    [ $SECONDS -lt 540 ] || continue
    tb ll $v $r "-r 2 -b 8 -e 64K -f 8 -n 200 -G 20 -o $OPS"
  done
done
for f in $W/word_*.txt $W/tiny_np1.txt; do echo "== $(basename $f)"; cat $f; done > $W/micro.txt
finish call2 ll
cat $W/micro.txt
cp $W/micro.txt $OUT/
