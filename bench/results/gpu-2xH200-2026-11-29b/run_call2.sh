#!/usr/bin/env bash
# Call 2 (2 x H200): the Recv-half test on memory a peer GPU can import (cudaMalloc'ed,
# registered: call 1's pool memory could not be, so no Recv half was made smaller on two
# GPUs), on two ranks and three; the schedule dump of mccl-perf's Send/Recv and AlltoAll at
# 16 MiB (the uneven blocks are there); then where every collective stands against NCCL's
# modes, 8 B - 1 GiB by 4x, one round: mccl plain, registered, on windows and on windows
# with the copy engines (NCCL_CTA_POLICY=2); NCCL 2.28.3 the same.
RUN_TIMEOUT=150
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
FP='GpuSingleProcess.PointToPointRecvHalfThatOnlyWaits:GpuSingleProcess.PointToPointBothWaysInOneBlock:GpuSingleProcess.PointToPointPatterns'
gtests 2 "$FP" 80
gtests 3 "$FP" 80
$M -x MCCL_DUMP_SCHEDULE=1 $B/mccl-perf -b 16M -e 16M -t 3 -c 0 -n 4 -w 1 -o sendrecv,alltoall 2>&1 |
  grep -a 'Simple launch' | sed 's/rank [0-9]*/rank R/' | sort | uniq -c > $W/dump.txt
cp $W/dump.txt $OUT/dump.txt
S="-b 8 -e 1G -f 4 -t 3 -c 0 -o all"
for v in mccl nccl mreg ncclreg mwin ncclwin mce ncclce; do
  [ $SECONDS -lt 520 ] || continue
  case $v in
    *reg) run m $v 1 "$S -R 1" ;;
    *win) run m $v 1 "$S -R 2" ;;
    *ce) run m $v 1 "$S -R 2" NCCL_CTA_POLICY=2 ;;
    *) run m $v 1 "$S" ;;
  esac
done
finish call2 m
