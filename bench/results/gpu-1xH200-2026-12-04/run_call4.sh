#!/usr/bin/env bash
# Call 4 (one H200, two ranks sharing it as threads): the lean kernel's forms of 2, 4 and
# 8 lines a thread (the fewest that hold a launch's lines) against main and the knobs, as
# call 2 (new: the forms; lines4: no form of eight, five to eight lines in the general
# kernel; lines2, lines1; new32: 32 channels; cb8k: 8 KiB a channel), three rounds
# interleaved; the lean kernels' registers; the LL tests on 2 and 3 ranks.
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
export PATH=$PATH:/usr/local/cuda/bin
cuobjdump -res-usage $B/mccl_gpu_tests 2>&1 | grep -A1 -E 'llLeanKernel' | c++filt |
  grep -oE 'llLeanKernel<[^(]*|REG:[0-9]+|STACK:[0-9]+|LOCAL:[0-9]+' | paste -d' ' - - - - > $W/lean_res.txt
A="-r 2 -b 8K -e 1M -f 2 -n 100 -G 10 -o allreduce,reducescatter,allgather,broadcast,sendrecv"
for round in 1 2 3; do
  tb ll main $round "$A"
  tb ll new $round "$A"
  tb ll lines4 $round "$A" MCCL_LL_LEAN_LINES=4
  tb ll lines2 $round "$A" MCCL_LL_LEAN_LINES=2
  tb ll lines1 $round "$A" MCCL_LL_LEAN_LINES=1
  tb ll new32 $round "$A" MCCL_LL_MAX_CHANNELS=32
  tb ll cb8k $round "$A" MCCL_LL_CHANNEL_BYTES=8192
done
A512="-r 2 -b 128K -e 512K -f 2 -n 300 -G 10 -o allreduce,reducescatter,allgather,sendrecv"
tb prof new 1 "$A512" MCCL_PROFILE=1
tb prof lines4 1 "$A512" MCCL_PROFILE=1 MCCL_LL_LEAN_LINES=4
F='*Lean*:*Alternate*:GpuSingleProcess.EveryTypeOpAndForm:*Graph*'
gtests 2 "$F" 150
mv $W/t_2.log $W/t_2_ll.log
gtests 3 "$F" 150
{
  cat $T
  python3 bench/threads_ab.py $W ll --ref main
  for f in $W/prof_*.txt; do echo "== $(basename $f)"; grep -aE "mccl profile: rank 0 LL" $f; done
  cat $W/lean_res.txt
  [ -f $W/errors.txt ] && cat $W/errors.txt
} > $OUT/call4_summary.txt 2>&1
tar -czf $OUT/call4.tgz -C $W .
cat $OUT/call4_summary.txt | head -20
