#!/usr/bin/env bash
# Call 6: the final build. A table within one page is one cudaMalloc, exported whole, and
# an LL sender's head is its connection's credit word there (loaded at setup beside the
# connection, as before this session); only beside a sparse table does the head have a
# block of its own and the credit come from the last launch (cp.async on the side). main
# (.carry/ab/main), new (auto) and new with MCCL_CONN_TABLE=sparse interleaved, three
# rounds, graph and eager, 8 B - 32 KiB; then every GPU test: single-process, MPI (plain,
# and NCCL_P2P_DISABLE=1 quick), device API, preload. The logs are packed after each part.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call6.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
G="-b 8 -e 32K -f 8 -t 3 -c 0 -o allreduce,allgather,sendrecv"
for round in 1 2 3; do
  for v in main auto sparse; do
    lp=$L; [ $v = main ] && lp=$L/ab/main:$L
    $M -x LD_LIBRARY_PATH=$lp -x MCCL_CONN_TABLE=$v $B/mccl-perf $G -G 100 --csv $W/graph_${v}_$round.csv > $W/graph_${v}_$round.log 2>&1 || echo "$v graph failed"
    $M -x LD_LIBRARY_PATH=$lp -x MCCL_CONN_TABLE=$v $B/mccl-perf $G -n 1000 --csv $W/eager_${v}_$round.csv > $W/eager_${v}_$round.log 2>&1 || echo "$v eager failed"
  done
done
for v in main auto; do
  lp=$L; [ $v = main ] && lp=$L/ab/main:$L
  $M -x LD_LIBRARY_PATH=$lp -x MCCL_PROFILE=1 $B/mccl-perf -b 8 -e 8 -n 2000 -w 100 -t 1 -c 0 -G 100 -o allreduce > $W/prof_graph_$v.log 2>&1
done
$M -x LD_LIBRARY_PATH=$L $B/mccl-perf -b 8 -e 4M -f 8 -c 1 -o allreduce,allgather,reducescatter,broadcast,reduce,sendrecv > $W/check.log 2>&1; echo "check rc=$?" >> $W/check.log
pack
LD_LIBRARY_PATH=$L timeout 230 $B/mccl_gpu_tests > $W/gpu_single.log 2>&1; echo "rc=$?" >> $W/gpu_single.log
pack
timeout 220 $M -x LD_LIBRARY_PATH=$L $B/mccl_gpu_mpi_tests > $W/gpu_mpi.log 2>&1; echo "rc=$?" >> $W/gpu_mpi.log
pack
timeout 45 $M -x LD_LIBRARY_PATH=$L -x NCCL_P2P_DISABLE=1 -x MCCL_TEST_QUICK=1 $B/mccl_gpu_mpi_tests > $W/gpu_mpi_net.log 2>&1; echo "rc=$?" >> $W/gpu_mpi_net.log
timeout 30 $M -x LD_LIBRARY_PATH=$L $B/mccl_gpu_devapi_tests > $W/gpu_devapi.log 2>&1; echo "rc=$?" >> $W/gpu_devapi.log
timeout 30 $M -x LD_LIBRARY_PATH=$L $B/mccl_preload_gpu_tests > $W/gpu_preload.log 2>&1; echo "rc=$?" >> $W/gpu_preload.log
{ grep -h "LL:" $W/prof_*.log; grep -h "connection table" $W/gpu_single.log; grep -H "rc=\|FAILED\|PASSED" $W/*.log | grep -v "OK \]"; } > $W/summary.txt
cat $W/summary.txt
pack
