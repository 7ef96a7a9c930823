#!/usr/bin/env bash
# Call 2 (two GPUs): the build with AllGather's second LL range on two ranks (planner.cc,
# ProtoLimits::llAgain), LL128 reductions sending in rounds of the copies' 4 lines a thread
# (ll128ReduceLoop's US) and the Simple kernel's start stamps (MCCL_PROFILE: parameters to
# shared memory, then to the first work's step loop), against 148f8b5 (old/).
#   tests: every single-process GPU test on the two GPUs; the type/op/form test with LL128
#          forced on two GPUs and on four ranks sharing them (two-shot at every size), with
#          LL forced on four; mccl-perf -c 1 AllReduce with LL128 forced
#   prof:  MCCL_PROFILE of the Simple start (ReduceScatter 2 MiB, AllGather 4 MiB, AllReduce
#          4 MiB, Send/Recv 4 MiB) with PDL and without, and of the LL128 AllReduce of 1 MiB
#   g:     AllGather 256 KiB - 8 MiB total, new against old, three rounds, NCCL plain
#   a:     AllReduce and ReduceScatter 256 KiB - 4 MiB, the same
RUN_TIMEOUT=120
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
timeout 240 $B/mccl_gpu_tests > $W/t_single.log 2>&1; res "single process, 2 GPUs" $? $W/t_single.log
MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=4 NCCL_PROTO=LL timeout 120 $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.EveryTypeOpAndForm' > $W/t_shared4_ll.log 2>&1
res "4 ranks sharing 2 GPUs, LL forced" $? $W/t_shared4_ll.log
NCCL_PROTO=LL128 timeout 120 $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.EveryTypeOpAndForm' > $W/t_ll128.log 2>&1
res "2 GPUs, LL128 forced" $? $W/t_ll128.log
MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=4 NCCL_PROTO=LL128 MCCL_LL128_TWO_SHOT=2 timeout 120 $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.EveryTypeOpAndForm' > $W/t_shared4_ll128.log 2>&1
res "4 ranks sharing 2 GPUs, LL128 forced, two-shot" $? $W/t_shared4_ll128.log
for b in 1M 3M 8M; do  # -c 1 checks the largest size
  timeout 60 $M -x NCCL_PROTO=LL128 $B/mccl-perf -b $b -e $b -t 1 -c 1 -o allreduce > $W/t_check_ll128_$b.log 2>&1
  echo "mccl-perf -c 1 allreduce $b LL128: rc=$? $(grep -a '# check' $W/t_check_ll128_$b.log)" >> $T
done
# (the MPI GPU tests stay out of this pack: the pack limit)
cat $T
prof() {  # NAME OP BYTES [VAR=VALUE ...]
  local name=$1 op=$2 b=$3; shift 3
  local x=(); for e in "$@"; do x+=(-x "$e"); done
  timeout 60 $M -x MCCL_PROFILE=1 "${x[@]}" $B/mccl-perf -b $b -e $b -t 1 -c 0 -o $op > $W/prof_$name.log 2>&1
  { echo "### $name: $op $b $*"; grep -a "mccl profile\|^ *$op" $W/prof_$name.log | cut -c1-1200 | head -8; } >> $W/prof.txt
}
for pdl in 1 0; do
  prof rs2m_pdl$pdl reducescatter 2M MCCL_PDL=$pdl
  prof ag4m_pdl$pdl allgather 4M MCCL_PDL=$pdl
  prof ar4m_pdl$pdl allreduce 4M MCCL_PDL=$pdl
  prof sr4m_pdl$pdl sendrecv 4M MCCL_PDL=$pdl
done
prof ar1m allreduce 1M
prof ar1m_old allreduce 1M LD_LIBRARY_PATH=$L/old:$L
prof ar1m_ll allreduce 1M NCCL_PROTO=LL
prof ag2m allgather 2M
G="-b 256K -e 8M -f 2 -t 3 -c 0 -o allgather"
A="-b 256K -e 4M -f 2 -t 3 -c 0 -o allreduce,reducescatter"
for r in 1 2 3; do
  run g mccl $r "$G"
  run g old $r "$G"
  run g nccl $r "$G"
  run a mccl $r "$A"
  run a old $r "$A"
  run a nccl $r "$A"
done
cat $W/prof.txt >> $T
finish call2 g a
