#!/usr/bin/env bash
# Call 6 (4 x H200), for the next session, knobs only on the final build: is the senders'
# gap between steps in four-rank chains the units' (a claim and two block barriers a unit)?
# Broadcast and Reduce 32 MiB - 1 GiB with MCCL_SIMPLE_UNITS=0 (fixed ranges a channel)
# against the default, two rounds interleaved; MCCL_PROFILE of Broadcast 64 MiB without units.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
W=$(mktemp -d)
M="timeout 90 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH=$L"
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
P="-b 32M -e 1G -f 2 -t 3 -c 0 -o broadcast,reduce"
for round in 1 2; do
  $M $B/mccl-perf $P --csv $W/u_mccl_$round.csv > /dev/null 2>&1
  $M -x MCCL_SIMPLE_UNITS=0 $B/mccl-perf $P --csv $W/u_nounits_$round.csv > /dev/null 2>&1
done
$M -x MCCL_PROFILE=1 -x MCCL_PDL=0 -x MCCL_SIMPLE_UNITS=0 $B/mccl-perf -b 64M -e 64M -t 1 -w 5 -n 50 -c 0 -o broadcast > $W/prof_64M_nounits.log 2>&1
{ python3 bench/summary.py $W u_
  echo "### profile 64 MiB, no units"; grep -a "Simple:" $W/prof_64M_nounits.log | sed 's/.*mccl profile/mccl profile/' | sort; } > $W/summary.txt 2>&1
cat $W/summary.txt
tar -czf "$OUT/call6.tgz" -C "$W" .
