#!/usr/bin/env bash
# Call 5: the lean LL kernel takes up to 4 lines a thread (the pack's libmccl, "lean4")
# against the session's start ("base"): GPU tests of the LL kernels and every type, op and
# form; mccl-perf -c 1 with the planner's choice and with LL forced; both builds
# interleaved twice, 32 KiB - 2 MiB, every collective and Send/Recv; lean4 on at most 16
# and 8 channels (fewer SMs); NCCL's three modes beside.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
ops=allreduce,reducescatter,reduce,allgather,broadcast,gather,scatter,alltoall,sendrecv
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
LD_LIBRARY_PATH=$L timeout 240 $B/mccl_gpu_tests --gtest_filter='*Ll*:*Lean*:*EveryTypeOpAndForm:*Graph*:*PointToPoint*:*TwoCommunicators*:*AlltoAll*:*Gather*' > $W/gpu_single.log 2>&1; echo "rc=$?" >> $W/gpu_single.log
$M -x LD_LIBRARY_PATH=$L $B/mccl-perf -b 8 -e 4M -f 2 -t 1 -o $ops -c 1 > $W/check.log 2>&1; echo "rc=$?" >> $W/check.log
$M -x LD_LIBRARY_PATH=$L -x NCCL_PROTO=LL $B/mccl-perf -b 1K -e 2M -f 2 -t 1 -o $ops -c 1 > $W/check_ll.log 2>&1; echo "rc=$?" >> $W/check_ll.log
$M -x LD_LIBRARY_PATH=$L -x NCCL_PROTO=LL -x NCCL_MAX_NCHANNELS=8 $B/mccl-perf -b 1K -e 1M -f 4 -t 1 -o $ops -c 1 > $W/check_ll8.log 2>&1; echo "rc=$?" >> $W/check_ll8.log
S="-b 32K -e 2M -f 2 -t 3 -c 0 -o $ops"
for r in 1 2; do
  $M -x LD_LIBRARY_PATH=$L/ab/base:$L $B/mccl-perf $S --csv $W/base_$r.csv > $W/base_$r.log 2>&1 || echo "base failed"
  $M -x LD_LIBRARY_PATH=$L $B/mccl-perf $S --csv $W/lean4_$r.csv > $W/lean4_$r.log 2>&1 || echo "lean4 failed"
done
for c in 16 8; do
  $M -x LD_LIBRARY_PATH=$L -x NCCL_MAX_NCHANNELS=$c $B/mccl-perf $S --csv $W/max${c}_1.csv > $W/max$c.log 2>&1
done
for R in 0 1 2; do
  $M -x LD_LIBRARY_PATH=$L $B/nccl-perf -R $R $S --csv $W/nccl_R$R.csv > $W/nccl_R$R.log 2>&1 || echo "nccl R$R failed"
done
$M -x LD_LIBRARY_PATH=$L -x MCCL_PROFILE=1 $B/mccl-perf -b 512K -e 512K -n 300 -w 20 -t 1 -c 0 -o reducescatter > $W/prof_rs512K.log 2>&1
grep -h "rc=\|FAILED\|PASSED\|wrong\|mismatch" $W/gpu_single.log $W/check*.log | sort | uniq -c > $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call5.tgz" -C "$W" .
