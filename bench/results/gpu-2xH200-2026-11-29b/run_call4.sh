#!/usr/bin/env bash
# Call 4 (2 x H200): under the zero-CTA policy a Broadcast takes the copy engines only from
# 2 MiB a rank (AllGather and AlltoAll above 4 KiB, as in call 3). Tests: the window tests
# on the two GPUs and on three ranks sharing them. Then Broadcast, AllGather and AlltoAll
# 8 B - 64 MiB by 4x on windows under NCCL_CTA_POLICY=2 (ce), on windows (win) and plain:
# mccl, main (old/: 7127ff7) and NCCL 2.28.3, two rounds; and a third round of call 1's
# Send/Recv and AlltoAll 4 MiB - 1 GiB (the Recv half that waits, against even halves).
RUN_TIMEOUT=150
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
gtests 2 'GpuSingleProcess.SymmetricWindows*' 150
gtests 3 'GpuSingleProcess.SymmetricWindows*' 120
S="-b 8 -e 64M -f 4 -t 3 -c 0 -o broadcast,allgather,alltoall"
for r in 1 2; do
  [ $SECONDS -lt 420 ] || continue
  run c mce $r "$S -R 2" NCCL_CTA_POLICY=2
  run c oldce $r "$S -R 2" NCCL_CTA_POLICY=2
  run c ncclce $r "$S -R 2" NCCL_CTA_POLICY=2
  run c mwin $r "$S -R 2"
  run c ncclwin $r "$S -R 2"
  run c mccl $r "$S"
  run c nccl $r "$S"
done
P="-b 4M -e 1G -f 2 -t 3 -c 0 -o sendrecv,alltoall"
if [ $SECONDS -lt 480 ]; then
  run u mccl 3 "$P"
  run u even 3 "$P" MCCL_P2P_DIRECT_RECV_THREADS=0
  run u ncclreg 3 "$P -R 1"
fi
finish call4 c u
