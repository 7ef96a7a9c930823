#!/usr/bin/env bash
# Call 3 (the planner of 2026-11-27: the all-pairs protocols' limits raised with the rank
# count, ring and chain on one node), four GPUs: (A) every collective 8 B - 2 GiB beside NCCL
# plain and registered, and AllReduce then AllGather with the user-buffer path off (call 1's
# slow small AllGather after a 2 GiB AllReduce); (B) AllReduce 1 - 16 MiB on 8, 12, 16
# channels against the default 24; (C) Broadcast and Reduce 8 - 512 MiB with smaller FIFO
# slots (NCCL_BUFFSIZE 1 and 2 MiB: slots of 256 and 512 KiB against 1 MiB), the chain's
# fill; (D) the single-process tests of every collective with four GPUs.
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
pack() { tar -czf "$OUT/call3.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
A="-b 8 -e 2G -f 4 -t 1 -w 3 -n 20 -c 0 -o allreduce,allgather,reducescatter,broadcast,reduce,sendrecv,alltoall,gather,scatter"
timeout 100 $M $B/mccl-perf $A -R 0 --csv $W/A_mccl_1.csv > $W/A_mccl.log 2>&1
timeout 100 $M $B/nccl-perf $A -R 0 --csv $W/A_nccl_1.csv > $W/A_nccl.log 2>&1
timeout 100 $M $B/nccl-perf $A -R 1 --csv $W/A_ncclreg_1.csv > $W/A_ncclreg.log 2>&1
G="-b 8 -e 2G -f 4 -t 1 -w 3 -n 20 -c 0 -o allreduce,allgather"
timeout 60 $M -x MCCL_USER_BUFFERS=0 $B/mccl-perf $G -R 0 --csv $W/G_ub0_1.csv > $W/G_ub0.log 2>&1
timeout 60 $M $B/mccl-perf $G -R 0 --csv $W/G_mccl_1.csv > $W/G_mccl.log 2>&1
python3 bench/summary.py $W A_ > $W/summaryA.txt; python3 bench/summary.py $W G_ > $W/summaryG.txt; pack
P="-b 1M -e 16M -f 2 -t 1 -w 3 -n 40 -c 0 -o allreduce"
for r in 1 2; do
  timeout 40 $M $B/mccl-perf $P -R 0 --csv $W/B_mccl_$r.csv > $W/B_mccl_$r.log 2>&1
  for c in 8 12 16; do timeout 40 $M -x NCCL_MAX_NCHANNELS=$c $B/mccl-perf $P -R 0 --csv $W/B_ch${c}_$r.csv > $W/B_ch${c}_$r.log 2>&1; done
  timeout 40 $M $B/nccl-perf $P -R 0 --csv $W/B_nccl_$r.csv > $W/B_nccl_$r.log 2>&1
done
python3 bench/summary.py $W B_ > $W/summaryB.txt; pack
Q="-b 8M -e 512M -f 4 -t 1 -w 3 -n 10 -c 0 -o broadcast,reduce"
for r in 1 2; do
  timeout 40 $M $B/mccl-perf $Q -R 0 --csv $W/C_mccl_$r.csv > $W/C_mccl_$r.log 2>&1
  timeout 40 $M -x NCCL_BUFFSIZE=2097152 $B/mccl-perf $Q -R 0 --csv $W/C_buf2m_$r.csv > $W/C_buf2m_$r.log 2>&1
  timeout 40 $M -x NCCL_BUFFSIZE=1048576 $B/mccl-perf $Q -R 0 --csv $W/C_buf1m_$r.csv > $W/C_buf1m_$r.log 2>&1
  timeout 40 $M $B/nccl-perf $Q -R 0 --csv $W/C_nccl_$r.csv > $W/C_nccl_$r.log 2>&1
done
python3 bench/summary.py $W C_ > $W/summaryC.txt; pack
F='GpuSingleProcess.EveryTypeOpAndForm:GpuSingleProcess.SimpleUnitsEveryCollectiveTypeAndForm:GpuSingleProcess.OneThreadGatherEveryRootAndProtocol:GpuSingleProcess.LargeBuffers:GpuSingleProcess.TwoCommunicatorsOneStreamEveryProtocol:GpuSingleProcess.GraphCaptureReplayedThousandTimes'
LD_LIBRARY_PATH=$L timeout 200 $B/mccl_gpu_tests --gtest_filter="$F" > $W/single4.log 2>&1; echo "rc=$?" >> $W/single4.log
pack
cat $W/summaryA.txt $W/summaryG.txt $W/summaryB.txt $W/summaryC.txt; grep -aE "PASSED|FAILED|rc=" $W/single4.log
