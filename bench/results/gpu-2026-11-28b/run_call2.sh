#!/usr/bin/env bash
# Call 2 (four GPUs): where four-rank AlltoAll and Send/Recv of 64 MiB - 1 GiB lose to NCCL,
# by knobs, on the build that stays (ab/old: 512 threads, the posting warp among them):
# default; 8 channels a peer (NCCL_MAX_NCHANNELS=8; default 16 = 64 / 4); point-to-point
# slots of 1 MiB and 256 KiB (NCCL_P2P_NVL_CHUNKSIZE; default: the collectives' FIFO, 4 MiB
# / 8); Send/Recv straight into the receiver's output (MCCL_USER_BUFFERS_MIN_BYTES=1 MiB);
# AlltoAll through the FIFO (MCCL_USER_BUFFERS_ALLTOALL_BYTES=0); an 8 MiB FIFO
# (NCCL_BUFFSIZE). Two rounds interleaved; NCCL plain and registered once.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
export LD_LIBRARY_PATH=$L/ab/old:$L
M="timeout 100 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 4 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
P="-b 64M -e 1G -f 2 -t 3 -c 0 -o alltoall,sendrecv"
for round in 1 2; do
  $M $B/mccl-perf $P --csv $W/k_mccl_$round.csv > /dev/null 2>&1
  $M -x NCCL_MAX_NCHANNELS=8 $B/mccl-perf $P --csv $W/k_ch8_$round.csv > /dev/null 2>&1
  $M -x NCCL_P2P_NVL_CHUNKSIZE=1048576 $B/mccl-perf $P --csv $W/k_slot1M_$round.csv > /dev/null 2>&1
  $M -x NCCL_P2P_NVL_CHUNKSIZE=262144 $B/mccl-perf $P --csv $W/k_slot256K_$round.csv > /dev/null 2>&1
  $M -x MCCL_USER_BUFFERS_MIN_BYTES=1048576 $B/mccl-perf $P --csv $W/k_ub_$round.csv > /dev/null 2>&1
  $M -x MCCL_USER_BUFFERS_ALLTOALL_BYTES=0 $B/mccl-perf $P --csv $W/k_fifo_$round.csv > /dev/null 2>&1
  $M -x NCCL_BUFFSIZE=8388608 $B/mccl-perf $P --csv $W/k_buf8M_$round.csv > /dev/null 2>&1
done
$M $B/nccl-perf $P --csv $W/k_nccl_1.csv > /dev/null 2>&1
$M $B/nccl-perf $P -R 1 --csv $W/k_ncclR1_1.csv > /dev/null 2>&1
python3 bench/summary.py $W k_ > $W/summary.txt 2>&1
cat $W/summary.txt
tar -czf "$OUT/call2.tgz" -C "$W" .
