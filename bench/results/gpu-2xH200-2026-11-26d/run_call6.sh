#!/usr/bin/env bash
# Call 6: the lean LL kernel in two forms, one line a thread and four, the host picking the
# smaller that fits (the pack's libmccl, "dual"), against call 5's four-line-only build
# ("lean4") and the session's start ("base"), interleaved twice, 32 KiB - 2 MiB, every
# collective and Send/Recv; CUDA graphs 8 B - 512 KiB (dual, base); GPU tests of the LL
# kernels and every type, op and form; mccl-perf -c 1 with the planner's choice and with LL
# forced; NCCL plain and windows beside.
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
S="-b 32K -e 2M -f 2 -t 3 -c 0 -o $ops"
for r in 1 2; do
  for v in base lean4 dual; do
    lp=$L/ab/$v:$L; [ $v = dual ] && lp=$L
    $M -x LD_LIBRARY_PATH=$lp $B/mccl-perf $S --csv $W/${v}_$r.csv > $W/${v}_$r.log 2>&1 || echo "$v failed"
  done
done
G="-b 8 -e 512K -f 4 -t 3 -c 0 -G 20 -o allreduce,reducescatter,reduce,allgather,broadcast,sendrecv"
for v in base dual; do
  lp=$L/ab/$v:$L; [ $v = dual ] && lp=$L
  $M -x LD_LIBRARY_PATH=$lp $B/mccl-perf $G --csv $W/graph_${v}.csv > $W/graph_${v}.log 2>&1 || echo "graph $v failed"
done
for R in 0 2; do
  $M -x LD_LIBRARY_PATH=$L $B/nccl-perf -R $R $S --csv $W/nccl_R$R.csv > $W/nccl_R$R.log 2>&1 || echo "nccl R$R failed"
done
grep -h "rc=\|FAILED\|PASSED\|wrong\|mismatch" $W/gpu_single.log $W/check*.log | sort | uniq -c > $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call6.tgz" -C "$W" .
