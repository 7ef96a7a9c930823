#!/usr/bin/env bash
# Call 5: TinyArgs of 32 queues (the lean LL kernel for LL collectives on 32 channels and
# Send/Recv pairs on 16): ab/tiny against the build before it (ab/prev: calls 2-4's),
# interleaved twice, 16 KiB - 2 MiB; the merged build (the pack's own libmccl: ab/tiny plus
# the init exchange by node of issue 17) once beside them; every single-process GPU test,
# the MPI GPU tests and the device-API tests on the merged build, and mccl-perf -c 1.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
ops=allreduce,reducescatter,reduce,allgather,broadcast,gather,scatter,alltoall,sendrecv
S="-b 16K -e 2M -f 2 -t 3 -o $ops"
LD_LIBRARY_PATH=$L timeout 300 $B/mccl_gpu_tests > $W/gpu_single.log 2>&1; echo "rc=$?" >> $W/gpu_single.log
$M -x LD_LIBRARY_PATH=$L timeout 250 $B/mccl_gpu_mpi_tests > $W/gpu_mpi.log 2>&1; echo "rc=$?" >> $W/gpu_mpi.log
[ -f $B/mccl_gpu_devapi_tests ] && { LD_LIBRARY_PATH=$L timeout 200 $B/mccl_gpu_devapi_tests > $W/gpu_devapi.log 2>&1; echo "rc=$?" >> $W/gpu_devapi.log; }
$M -x LD_LIBRARY_PATH=$L $B/mccl-perf -b 8 -e 4M -f 2 -t 1 -o $ops -c 1 > $W/check.log 2>&1; echo "rc=$?" >> $W/check.log
for r in 1 2; do
  $M -x LD_LIBRARY_PATH=$L/ab/prev:$L $B/mccl-perf $S -c 0 --csv $W/prev_$r.csv > $W/prev_$r.log 2>&1 || echo "prev failed"
  $M -x LD_LIBRARY_PATH=$L/ab/tiny:$L $B/mccl-perf $S -c 0 --csv $W/tiny_$r.csv > $W/tiny_$r.log 2>&1 || echo "tiny failed"
done
$M -x LD_LIBRARY_PATH=$L $B/mccl-perf $S -c 0 --csv $W/merged.csv > $W/merged.log 2>&1 || echo "merged failed"
grep -h "rc=\|FAILED\|PASSED\|wrong\|mismatch" $W/gpu_single.log $W/gpu_mpi.log $W/gpu_devapi.log $W/check.log 2>/dev/null | sort | uniq -c > $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call5.tgz" -C "$W" .
