#!/usr/bin/env bash
# Call 1: threads per block (NCCL_NTHREADS 512 = default, 640, 768, 1024) for every
# collective 512 KiB - 2 GiB, eager; point-to-point family at 16 / 32 channels; NCCL
# alongside. Default twice (first and last) for the machine's drift.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 LD_LIBRARY_PATH=$PWD/$B:${LD_LIBRARY_PATH:-}
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
ops=allreduce,allgather,reducescatter,broadcast,reduce,gather,scatter,alltoall,sendrecv
p2p=gather,scatter,alltoall,sendrecv
run() { local name=$1; shift; $M "$@" -b 512K -e 2G -f 4 -t 3 -c 0 --csv $W/$name.csv > $W/$name.log 2>&1 || echo "$name failed rc=$?"; }
run base1 $B/mccl-perf -o $ops
run nccl $B/nccl-perf -o $ops
for t in 640 768 1024; do run t$t -x NCCL_NTHREADS=$t $B/mccl-perf -o $ops; done
run p2p_max16 -x NCCL_MAX_NCHANNELS=16 $B/mccl-perf -o $p2p
run p2p_min32 -x NCCL_MIN_NCHANNELS=32 $B/mccl-perf -o $p2p
run base2 $B/mccl-perf -o $ops
head -2 $W/base1.csv
tar -czf "$OUT/call1.tgz" -C "$W" .
