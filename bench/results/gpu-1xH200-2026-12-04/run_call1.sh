#!/usr/bin/env bash
# Call 1 (one H200, ranks sharing it as threads): the GPU tests of the LL channel cap and
# the lean kernel's several-line form (branch wip/ll-nccl-channels): the LL-family tests
# on 3 ranks first, then every single-process GPU test on 2 ranks; and the lean kernels'
# registers, stack and spills (cuobjdump).
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
export PATH=$PATH:/usr/local/cuda/bin
cuobjdump -res-usage $B/mccl_gpu_tests 2>&1 | grep -A1 -E 'llLeanKernel' | c++filt |
  grep -oE 'llLeanKernel<[^(]*|REG:[0-9]+|STACK:[0-9]+|LOCAL:[0-9]+' | paste -d' ' - - - - > $W/lean_res.txt
LLF='*Lean*:*Ll*:*LL*:*EveryType*:*Graph*:*Alternate*'
gtests 3 "$LLF" 200
mv $W/t_3.log $W/t_3_ll.log
gtests 2 '*' 330
cat $W/lean_res.txt >> $T
finish call1
