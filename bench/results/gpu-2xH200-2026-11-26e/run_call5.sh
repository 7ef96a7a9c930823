#!/usr/bin/env bash
# Call 5: is the network path (NCCL_P2P_DISABLE=1) flaky before this session's change too?
# Call 4 saw rank 1's kernel time out waiting for rank 0 in MemoryComesBackAfterDestroy
# there (call 3, the same library, had passed it). main at 16e9ed6 ("old", .carry/ab/old)
# and this tree ("new") alternate, three rounds, the two tests that run collectives on the
# network path (MCCL_TEST_QUICK=1), 60 s each.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
for round in 1 2 3; do
  for v in old new; do
    lib=$L; [ $v = old ] && lib=$L/ab/old:$L
    timeout 60 $M -x LD_LIBRARY_PATH=$lib -x NCCL_P2P_DISABLE=1 -x MCCL_TEST_QUICK=1 $B/mccl_gpu_mpi_tests \
      --gtest_filter='*MemoryComesBack*:*CollectivesFromMpiComm*' > $W/net_${v}_r$round.log 2>&1
    echo "rc=$?" >> $W/net_${v}_r$round.log
  done
done
grep -H "rc=\|FAILED\|PASSED\|OK \]\|MCCL_TIMEOUT" $W/*.log > $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call5.tgz" -C "$W" .
