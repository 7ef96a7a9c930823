#!/usr/bin/env bash
# Call 1 (one GPU): where the lean LL kernel's 0.8 us from block start to setup goes.
# The measurement build (scripts/kernel-profile.sh ll, .carry/ab/prof) stamps the start from
# the kernel's first instruction in parts (first parameter, queue entry, the work's range, the
# grid wait, the rest). Under MCCL_PROFILE=1, each build: 8-byte MPI_Allreduce on two
# processes under MPS (micro_mpi_tiny route, replayed and launched), and AllReduce, AllGather
# and Send/Recv of 8 B on two ranks as threads (mccl-threads-bench, eager and in a graph).
# Without the profile, both builds' times alternating (the stamps' own cost). Then the SASS of
# the lean kernel's 8-byte float AllReduce form, where a disassembler is found.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
mpsStart
MM="$M -x MCCL_SHARED_GPU=2"
for v in base prof; do
  lp=$L
  [ $v = prof ] && lp=$L/ab/prof:$L
  timeout 60 $MM -x LD_LIBRARY_PATH=$lp -x MCCL_PROFILE=1 $B/micro_mpi_tiny 2000 route > $W/prof_${v}_replay.txt 2>&1 ||
    echo "prof $v replay rc=$?" >> $W/errors.txt
  timeout 60 $MM -x LD_LIBRARY_PATH=$lp -x MCCL_PROFILE=1 -x MCCL_MPI_GRAPH_BYTES=0 $B/micro_mpi_tiny 2000 route \
    > $W/prof_${v}_launch.txt 2>&1 || echo "prof $v launch rc=$?" >> $W/errors.txt
done
for round in 1 2; do
  for v in base prof; do
    lp=$L
    [ $v = prof ] && lp=$L/ab/prof:$L
    timeout 60 $MM -x LD_LIBRARY_PATH=$lp $B/micro_mpi_tiny 2000 route,flag > $W/ab_${v}_replay_$round.txt 2>&1 ||
      echo "ab $v replay $round rc=$?" >> $W/errors.txt
  done
done
mpsStop
for v in base prof; do
  tb tbprof $v 1 "-r 2 -b 8 -e 8 -n 2000 -G 100 -o allreduce,allgather,sendrecv" MCCL_PROFILE=1
done
for round in 1 2; do
  for v in base prof; do tb tbab $v $round "-r 2 -b 8 -e 8 -n 2000 -G 100 -o allreduce,allgather,sendrecv"; done
done
# A disassembler: the CUDA toolkit's, or the one Triton (PyTorch) carries.
dis=$(command -v cuobjdump || true)
[ -n "$dis" ] || dis=$(find / -xdev -name cuobjdump -type f 2>/dev/null | head -1)
echo "cuobjdump: ${dis:-none}" > $W/sass_tools.txt
if [ -n "$dis" ]; then
  for v in base prof; do
    lib=$L/libmccl.so.0
    [ $v = prof ] && lib=$L/ab/prof/libmccl.so.0
    "$dis" -sass "$lib" 2>>$W/sass_tools.txt |
      awk '/Function :/ {on = ($0 ~ /llLeanKernelIfLb1ELi1E/)} on' | head -900 > $W/sass_$v.txt
  done
fi
{
  echo "== micro_mpi_tiny route / flag, us a call (slower rank's mean, median of 5 trials): base | prof"
  for round in 1 2; do
    echo "replay $round: $(grep -E '^(route|flag) ' $W/ab_base_replay_$round.txt | awk '{print $1, $2}' | tr '\n' ' ')| $(grep -E '^(route|flag) ' $W/ab_prof_replay_$round.txt | awk '{print $1, $2}' | tr '\n' ' ')"
  done
  for f in $W/prof_*.txt $W/tbprof_*.txt; do echo "== $(basename $f)"; grep -aE 'mccl profile.*LL|route |allreduce|allgather|sendrecv' $f | cut -c1-400; done
  wc -l $W/sass_*.txt 2>/dev/null
} >> $T
finish call1 tbab
