#!/usr/bin/env bash
# Call 1 (one H200): issue 12's 8-byte MPI_Allreduce on device buffers, the floor of a
# kernel round trip by how the host learns the kernel is done (micro_mpi_tiny, np 1: the
# pieces; the kernel rows are a one-rank communicator's copy), three rounds each with
# CUDA_DEVICE_MAX_CONNECTIONS=32 (what the benchmarks set) and unset (what a user's MPI
# program has), interleaved.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
for r in 1 2 3; do
  for c in 32 unset; do
    if [ $c = unset ]; then
      (unset CUDA_DEVICE_MAX_CONNECTIONS; timeout 120 mpirun --allow-run-as-root -np 1 -x LD_LIBRARY_PATH=$L $B/micro_mpi_tiny 2000) > $W/tiny_${c}_$r.txt 2>&1
    else
      timeout 120 mpirun --allow-run-as-root -np 1 -x LD_LIBRARY_PATH=$L -x CUDA_DEVICE_MAX_CONNECTIONS $B/micro_mpi_tiny 2000 > $W/tiny_${c}_$r.txt 2>&1
    fi
    echo "rc=$?" >> $W/tiny_${c}_$r.txt
  done
done
# mccl's own host time and eager time of an 8-byte AllReduce, two ranks as threads sharing
# the GPU (the context of the pieces above).
tb ar new 1 "-r 2 -b 8 -e 8 -n 2000 -G 0 -o allreduce"
for f in $W/tiny_*.txt $W/ar_*.txt; do echo "== $(basename $f)"; cat $f; done > $W/summary.txt
cat $W/summary.txt
tar -czf "$OUT/call1.tgz" -C "$W" .
