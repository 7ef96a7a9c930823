#!/usr/bin/env bash
# Call 4 (call 3's build): three ranks (on GPUs 0-2) 64 KiB - 16 MiB of every collective
# beside NCCL, where the all-pairs limits scale by 1.5 (LL) and 2 (LL128); Gather and
# AllGather 32 B - 2 MiB with four ranks twice more (call 3's slow small Gather, call 1's
# slow small AllGather: host time per call 13-22 us in one op's segment); the MPI GPU tests
# with four ranks (quick sizes).
set -uo pipefail
cd "$(dirname "$0")/../../.."
D=$(dirname "$0")
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
N=$(nvidia-smi -L | wc -l)
M="mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call4.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
T="-b 64K -e 16M -f 2 -t 1 -w 3 -n 30 -c 0 -o allreduce,allgather,reducescatter,broadcast,reduce"
for r in 1 2; do
  timeout 60 $M -np 3 -x CUDA_VISIBLE_DEVICES=0,1,2 $B/mccl-perf $T -R 0 --csv $W/T_mccl_$r.csv > $W/T_mccl_$r.log 2>&1
  timeout 60 $M -np 3 -x CUDA_VISIBLE_DEVICES=0,1,2 $B/nccl-perf $T -R 0 --csv $W/T_nccl_$r.csv > $W/T_nccl_$r.log 2>&1
done
python3 bench/summary.py $W T_ > $W/summaryT.txt; pack
S="-b 32 -e 2M -f 4 -t 1 -w 3 -n 30 -c 0 -o gather,allgather,scatter"
for r in 1 2; do
  timeout 60 $M -np $N $B/mccl-perf $S -R 0 --csv $W/S_mccl_$r.csv > $W/S_mccl_$r.log 2>&1
  timeout 60 $M -np $N $B/nccl-perf $S -R 0 --csv $W/S_nccl_$r.csv > $W/S_nccl_$r.log 2>&1
done
python3 bench/summary.py $W S_ > $W/summaryS.txt; pack
MCCL_TEST_QUICK=1 timeout 170 $M -np $N -x MCCL_TEST_QUICK $B/mccl_gpu_mpi_tests > $W/mpi4.log 2>&1; echo "rc=$?" >> $W/mpi4.log
pack
cat $W/summaryT.txt $W/summaryS.txt; grep -aE "PASSED|FAILED|rc=" $W/mpi4.log
