#!/usr/bin/env bash
# Call 4: after call 3's failure (three ranks on two GPUs in one process, the path forced:
# a rank on the other GPU wrote into a stream-ordered pool's buffer, which peer access
# does not cover: illegal address), a same-process peer on another GPU gets the address
# only for cudaMalloc'ed memory. The same tests again (three ranks, and two), every
# single-process GPU test at the defaults (AllReduce from 10 MiB and AllGather from 6 MiB a
# rank on the path), the MPI GPU tests, -c 1 checks eager and in graphs.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call4.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
F='GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.SimpleUnits*:GpuSingleProcess.GraphCaptureReplayedThousandTimes:GpuSingleProcess.TwoCommunicatorsOneStreamEveryProtocol:GpuSingleProcess.LargeBuffers'
LD_LIBRARY_PATH=$L MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=3 MCCL_USER_BUFFERS_MIN_BYTES=1 NCCL_PROTO=Simple timeout 240 $B/mccl_gpu_tests --gtest_filter="$F" > $W/single3.log 2>&1; echo "rc=$?" >> $W/single3.log
pack
LD_LIBRARY_PATH=$L MCCL_USER_BUFFERS_MIN_BYTES=1 timeout 200 $B/mccl_gpu_tests --gtest_filter="$F" > $W/single2.log 2>&1; echo "rc=$?" >> $W/single2.log
pack
LD_LIBRARY_PATH=$L timeout 300 $B/mccl_gpu_tests > $W/single_default.log 2>&1; echo "rc=$?" >> $W/single_default.log
pack
MCCL_TEST_QUICK=1 timeout 240 $M -x MCCL_TEST_QUICK $B/mccl_gpu_mpi_tests > $W/mpi.log 2>&1; echo "rc=$?" >> $W/mpi.log
C="-b 8 -e 256M -f 8 -c 1 -n 3 -w 1 -t 1 -o allreduce,allgather,broadcast,reducescatter"
timeout 100 $M $B/mccl-perf $C -R 0 > $W/check_R0.log 2>&1; echo "rc=$?" >> $W/check_R0.log
timeout 100 $M $B/mccl-perf $C -R 1 > $W/check_R1.log 2>&1; echo "rc=$?" >> $W/check_R1.log
timeout 100 $M $B/mccl-perf $C -R 0 -G 3 > $W/check_G0.log 2>&1; echo "rc=$?" >> $W/check_G0.log
pack
grep -aH "rc=\|^\[  FAILED\|PASSED\|FAILED  \]\|OK \]\|rror\|wrong\|mismatch" $W/*.log | head -80 > $W/summary.txt
cat $W/summary.txt
pack
