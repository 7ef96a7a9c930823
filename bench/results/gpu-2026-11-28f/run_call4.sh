#!/usr/bin/env bash
# Call 4 (two GPUs): where the landed kernels stand against NCCL's modes, 8 B - 512 MiB by 4x,
# every collective, Send/Recv, AlltoAll, Gather, Scatter, eager, one round each. mccl is
# old/ (148f8b5: the landed kernels and, but for AllGather of 2 MiB total, the landed
# planner) plain (-R 0), registered (-R 1) and on windows (-R 2); NCCL 2.28.3 the same, and
# on windows with the copy engines (NCCL_CTA_POLICY=2).
RUN_TIMEOUT=150
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
S="-b 8 -e 512M -f 4 -t 3 -c 0 -o all"
O=LD_LIBRARY_PATH=$L/old:$L
run m mccl 1 "$S" $O
run m nccl 1 "$S"
run m mreg 1 "$S -R 1" $O
run m ncclreg 1 "$S -R 1"
run m mwin 1 "$S -R 2" $O
run m ncclwin 1 "$S -R 2"
run m ncclce 1 "$S -R 2" NCCL_CTA_POLICY=2
finish call4 m
