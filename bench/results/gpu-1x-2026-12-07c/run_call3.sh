#!/usr/bin/env bash
# Call 3 (one GPU): which part of call 2's change pays. Call 2's build ("new": the parameter
# loads issued together, the reductions' arithmetic and the connections' addresses read
# before the grid wait) against two variants of its lean kernel (call 1's build left out: the
# pack's 64 MiB): the connections' addresses read after the wait (.carry/ab/late, as before call 2)
# or before it in the reduction kernels only (.carry/ab/redearly). Alternating, three rounds:
# 8 B - 4 KiB collectives on two ranks as threads (mccl-threads-bench, eager and in graphs,
# with and without MCCL_PDL=2), then 8-byte MPI_Allreduce on two processes under MPS
# (micro_mpi_tiny route,flag, replayed and launched: tinyAb).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
A="-r 2 -b 8 -e 4K -f 8 -n 1000 -G 100 -o allreduce,allgather,broadcast,reducescatter,sendrecv"
for round in 1 2 3; do
  for v in new late redearly; do
    tb tbab $v $round "$A"
    # With programmatic dependent launch (off by default where ranks share a GPU): what a
    # block reads before its grid wait overlaps the kernel before it, as on two GPUs.
    tb tbpdl $v $round "$A" MCCL_PDL=2
  done
done
mpsStart
tinyAb 3 new late redearly
mpsStop
{
  echo "== graph us a call at 8 B, per round"
  for v in new late redearly; do
    for r in 1 2 3; do
      echo "$v $r: $(grep -E '^[a-z]+ +8 ' $W/tbab_${v}_$r.txt | awk '{printf "%s %s | ", $1, $NF}')"
      echo "$v $r pdl: $(grep -E '^[a-z]+ +8 ' $W/tbpdl_${v}_$r.txt | awk '{printf "%s %s | ", $1, $NF}')"
    done
  done
} >> $T
finish call3 tbab tbpdl
