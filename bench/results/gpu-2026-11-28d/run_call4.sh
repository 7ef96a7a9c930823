#!/usr/bin/env bash
# Call 4 (two GPUs, the build of 4cbe485): every collective and Send/Recv 1 MiB - 1 GiB
# (factor 4) and 8 B - 256 KiB (factor 8), two rounds of mccl on plain buffers against
# NCCL plain and registered, one round each; the single-process GPU tests are not in this
# pack (the MPI collectives test ran in call 3).
cd "$(dirname "$0")/../../.."
RUN_TIMEOUT=150
. bench/device_call.sh
Lg="-b 1M -e 1G -f 4 -t 3 -c 0 -o all"
Sm="-b 8 -e 256K -f 8 -t 3 -c 0 -o all"
for r in 1 2; do
  run l mccl $r "$Lg"
  run s mccl $r "$Sm"
  [ $r = 1 ] || continue
  run l nccl $r "$Lg"; run l ncclR1 $r "$Lg -R 1"
  run s nccl $r "$Sm"; run s ncclR1 $r "$Sm -R 1"
done
finish call4 l s
