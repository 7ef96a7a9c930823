#!/usr/bin/env bash
# Call 2 (build of 782e936), four GPUs: (A) the host's time per launch (MCCL_PROFILE) of
# small AllGather against ReduceScatter and AllReduce, four ranks and two; (B) 64 KiB -
# 64 MiB with each protocol / algorithm forced against the default and NCCL; (C) 32 MiB -
# 2 GiB one-way and point-to-point with more channels and the user-buffer path forced;
# (D) the single-process tests that call 1's time limit cut.
set -uo pipefail
cd "$(dirname "$0")/../../.."
D=$(dirname "$0")
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
N=$(nvidia-smi -L | wc -l)
M="mpirun --allow-run-as-root --bind-to none -np $N -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call2.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
for op in allgather reducescatter allreduce; do
  S="-b 2048 -e 2048 -t 1 -w 3 -n 200 -c 0 -o $op"
  timeout 40 $M -x MCCL_PROFILE=1 $B/mccl-perf $S > $W/prof4_$op.log 2>&1
  timeout 40 mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L -x CUDA_VISIBLE_DEVICES=0,1 -x MCCL_PROFILE=1 $B/mccl-perf $S > $W/prof2_$op.log 2>&1
done
pack
P="-b 64K -e 64M -f 2 -t 1 -w 3 -n 20 -c 0 -o allreduce,reduce,reducescatter,broadcast,allgather"
run() { local tag=$1; shift; timeout 100 $M "$@" $B/mccl-perf $P -R 0 --csv $W/B_${tag}_1.csv > $W/B_$tag.log 2>&1; }
run mccl
run ll128 -x NCCL_PROTO=LL128
run ll -x NCCL_PROTO=LL
run ring -x NCCL_PROTO=Simple -x NCCL_ALGO=Ring
run simple -x NCCL_PROTO=Simple
timeout 100 $M $B/nccl-perf $P -R 0 --csv $W/B_nccl_1.csv > $W/B_nccl.log 2>&1
python3 bench/summary.py $W B_ > $W/summaryB.txt; pack
Q="-b 32M -e 2G -f 4 -t 1 -w 3 -n 10 -c 0 -o broadcast,reduce,alltoall,sendrecv,gather,allgather"
timeout 100 $M $B/mccl-perf $Q -R 0 --csv $W/C_mccl_1.csv > $W/C_mccl.log 2>&1
timeout 100 $M -x NCCL_MIN_NCHANNELS=32 $B/mccl-perf $Q -R 0 --csv $W/C_ch32_1.csv > $W/C_ch32.log 2>&1
timeout 100 $M -x NCCL_MAX_NCHANNELS=16 $B/mccl-perf $Q -R 0 --csv $W/C_ch16_1.csv > $W/C_ch16.log 2>&1
timeout 100 $M -x MCCL_USER_BUFFERS_MIN_BYTES=4194304 $B/mccl-perf $Q -R 0 --csv $W/C_ub_1.csv > $W/C_ub.log 2>&1
timeout 100 $M $B/nccl-perf $Q -R 0 --csv $W/C_nccl_1.csv > $W/C_nccl.log 2>&1
timeout 100 $M $B/nccl-perf $Q -R 1 --csv $W/C_ncclreg_1.csv > $W/C_ncclreg.log 2>&1
python3 bench/summary.py $W C_ > $W/summaryC.txt; pack
F='GpuSingleProcess.SymmetricWindowsCopyEngines:GpuSingleProcess.SymmetricWindowsGraphReplayAndTwoCommunicators:GpuSingleProcess.OneThreadGatherEveryRootAndProtocol:GpuSingleProcess.CheckPointersRejectsPeerAndHostMemory:GpuSingleProcess.CallsQueuedBehindATimeoutStopWithIt:GpuSingleProcess.ConnectionTableMemoryFollowsConnectedPeers'
LD_LIBRARY_PATH=$L timeout 150 $B/mccl_gpu_tests --gtest_filter="$F" > $W/single4b.log 2>&1; echo "rc=$?" >> $W/single4b.log
pack
cat $W/summaryB.txt $W/summaryC.txt; grep -H "host us per" $W/prof*.log | grep "rank 0"; tail -3 $W/single4b.log
