#!/usr/bin/env bash
# Call 2 (one GPU, the machine of call 1, still warm): this build ("new", call 1's pack, left
# unpacked in .carry) against main before it ("old", .carry-ab/old.tar.xz, to .carry/old and
# .carry/ab/old), alternating in each round:
#   eager   mccl-perf on two processes under MPS, back to back, with programmatic dependent
#           launch (MCCL_PDL=2, the default on separate sm_90 GPUs), 8 B - 32 KiB;
#   prof    MCCL_PROFILE's host phases of an eager 8-byte AllReduce (the launch call);
#   tbab    two ranks as threads, eager and in CUDA graphs (mccl-threads-bench);
#   tinyAb  8-byte MPI_Allreduce through libmccl_mpi, replayed and launched.
cd "$(dirname "$0")/../../.."
if [ ! -f .carry/libmccl.so.0 ]; then echo "call 1's .carry is gone (a fresh machine): nothing to compare"; exit 3; fi
tar -xJf .carry-ab/old.tar.xz -C .carry && mkdir -p .carry/ab && ln -sfn ../old .carry/ab/old
. bench/device_call.sh
mpsStart
P="-b 8 -e 32K -f 8 -n 3000 -w 200 -t 3 --no-mpi -c 0 -o allreduce,allgather,broadcast,reducescatter,sendrecv"
for round in 1 2 3; do
  run eager new $round "$P" MCCL_SHARED_GPU=2 MCCL_PDL=2
  run eager old $round "$P" MCCL_SHARED_GPU=2 MCCL_PDL=2
done
Q="-b 8 -e 8 -n 5000 -w 200 -t 1 --no-mpi -c 0 -o allreduce"
for round in 1 2; do
  run prof new $round "$Q" MCCL_SHARED_GPU=2 MCCL_PDL=2 MCCL_PROFILE=1
  run prof old $round "$Q" MCCL_SHARED_GPU=2 MCCL_PDL=2 MCCL_PROFILE=1
done
{
  echo "== MCCL_PROFILE host phases, eager 8-byte AllReduce, MCCL_PDL=2"
  for f in $W/prof_*.log; do echo "-- $(basename $f)"; grep -h 'mccl profile' $f | cut -c1-400; done
} >> $T
tinyAb 2 new old
mpsStop
for round in 1 2; do
  for v in new old; do
    tb tbab $v $round "-r 2 -b 8 -e 32K -f 8 -n 1000 -G 100 -o allreduce,allgather,broadcast,reducescatter,sendrecv"
  done
done
finish call2 eager prof tbab
