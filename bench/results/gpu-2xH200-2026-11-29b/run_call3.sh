#!/usr/bin/env bash
# Call 3 (2 x H200): under the zero-CTA policy, AllGather, Broadcast and AlltoAll of 4 KiB a
# rank (block) or less keep the LL kernel (one block) instead of the copy engines. Tests:
# the window copy-engine tests, the window collectives and the Recv-half test on the two
# GPUs, the same on three ranks sharing them (the SM path there). Then two more rounds of
# call 2's sweep, every collective in every mode, 8 B - 1 GiB by 4x.
RUN_TIMEOUT=150
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
FP='GpuSingleProcess.SymmetricWindows*:GpuSingleProcess.PointToPointRecvHalfThatOnlyWaits'
gtests 2 "$FP" 150
gtests 3 "$FP" 120
S="-b 8 -e 1G -f 4 -t 3 -c 0 -o all"
for r in 2 3; do
  for v in mccl nccl mreg ncclreg mwin ncclwin mce ncclce; do
    [ $SECONDS -lt 520 ] || continue
    case $v in
      *reg) run m $v $r "$S -R 1" ;;
      *win) run m $v $r "$S -R 2" ;;
      *ce) run m $v $r "$S -R 2" NCCL_CTA_POLICY=2 ;;
      *) run m $v $r "$S" ;;
    esac
  done
done
finish call3 m
