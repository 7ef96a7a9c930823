#!/usr/bin/env bash
# Call 1, four GPUs: where a four-rank AllReduce of 64 KiB - 8 MiB spends the time that
# NCCL does not. mccl and NCCL eager and in CUDA graphs; mccl at 8 and 16 channels, on LL,
# one hop; the same sizes on two of the GPUs; MCCL_PROFILE per step at 256 KiB, 1 and 2 MiB
# on four ranks and 1 MiB on two; NCCL's own choice (TUNING lines).
set -uo pipefail
cd "$(dirname "$0")/../../.."
D=$(dirname "$0")
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
W=$(mktemp -d)
pack() { tar -czf "$OUT/call1.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt; nvidia-smi topo -m >> $W/when.txt
N=$(nvidia-smi -L | wc -l)
M="mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L"
P="-b 64K -e 8M -f 2 -t 1 -w 3 -n 30 -c 0 -o allreduce"
for r in 1 2; do
  timeout 60 $M -np $N $B/mccl-perf $P --csv $W/E_mccl_$r.csv > $W/E_mccl_$r.log 2>&1
  timeout 60 $M -np $N $B/nccl-perf $P --csv $W/E_nccl_$r.csv > $W/E_nccl_$r.log 2>&1
  timeout 60 $M -np $N $B/mccl-perf $P -G 10 -n 10 --csv $W/G_mccl_$r.csv > $W/G_mccl_$r.log 2>&1
  timeout 60 $M -np $N $B/nccl-perf $P -G 10 -n 10 --csv $W/G_nccl_$r.csv > $W/G_nccl_$r.log 2>&1
  timeout 60 $M -np 2 $B/mccl-perf $P --csv $W/T_mccl_$r.csv > $W/T_mccl_$r.log 2>&1
  timeout 60 $M -np 2 $B/nccl-perf $P --csv $W/T_nccl_$r.csv > $W/T_nccl_$r.log 2>&1
done
pack
for v in "ch16:NCCL_MAX_NCHANNELS=16" "ch8:NCCL_MAX_NCHANNELS=8" "ll:NCCL_PROTO=LL" "onehop:MCCL_LL128_TWO_SHOT=0" "twohop:MCCL_LL128_TWO_SHOT=2" "t256:NCCL_NTHREADS=256"; do
  timeout 60 $M -np $N -x ${v#*:} $B/mccl-perf $P --csv $W/E_${v%%:*}_1.csv > $W/E_${v%%:*}_1.log 2>&1
done
for s in 256K 1M 2M; do
  timeout 60 $M -np $N -x MCCL_PROFILE=1 $B/mccl-perf -b $s -e $s -t 1 -w 3 -n 200 -c 0 -o allreduce > $W/prof4_$s.log 2>&1
done
timeout 60 $M -np 2 -x MCCL_PROFILE=1 $B/mccl-perf -b 1M -e 1M -t 1 -w 3 -n 200 -c 0 -o allreduce > $W/prof2_1M.log 2>&1
timeout 60 $M -np $N -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=TUNING $B/nccl-perf -b 64K -e 8M -f 2 -t 1 -w 1 -n 2 -c 0 -o allreduce > $W/nccl_tuning.log 2>&1
grep -E "AllReduce" $W/nccl_tuning.log | grep -v "^#" | awk '!seen[$0]++' | head -40 > $W/nccl_tuning_lines.txt
for p in E G T; do python3 bench/summary.py $W ${p}_ > $W/summary$p.txt 2>&1; done
pack
cat $W/summaryE.txt $W/summaryG.txt $W/summaryT.txt; grep -h "mccl profile" $W/prof*.log | grep "rank 0" ; head -20 $W/nccl_tuning_lines.txt
