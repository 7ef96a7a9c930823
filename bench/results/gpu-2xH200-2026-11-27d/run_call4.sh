#!/usr/bin/env bash
# Call 4 (only where more than two GPUs are lent): AllReduce on all GPUs, and on three at
# sizes three divides, forced LL128 two-shot (MCCL_LL128_TWO_SHOT=1) against one hop, Simple,
# the default and NCCL; then the unaligned AllGather / ReduceScatter at three ranks.
set -uo pipefail
cd "$(dirname "$0")/../../.."
D=$(dirname "$0")
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
W=$(mktemp -d)
pack() { tar -czf "$OUT/call4.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
mp() { echo "mpirun --allow-run-as-root --bind-to none -np $1 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L"; }
cset() {  # np sizes tag round
  local np=$1 P="$2 -t 1 -w 3 -n 20 -c 0 -o allreduce" tag=$3 r=$4
  timeout 60 $(mp $np) $B/mccl-perf $P -R 0 --csv $W/${tag}_mccl_$r.csv > $W/${tag}_mccl_$r.log 2>&1
  timeout 60 $(mp $np) -x NCCL_PROTO=LL128 -x MCCL_LL128_TWO_SHOT=1 $B/mccl-perf $P -R 0 --csv $W/${tag}_two_$r.csv > $W/${tag}_two_$r.log 2>&1
  timeout 60 $(mp $np) -x NCCL_PROTO=LL128 $B/mccl-perf $P -R 0 --csv $W/${tag}_one_$r.csv > $W/${tag}_one_$r.log 2>&1
  timeout 60 $(mp $np) -x NCCL_PROTO=Simple $B/mccl-perf $P -R 0 --csv $W/${tag}_simple_$r.csv > $W/${tag}_simple_$r.log 2>&1
  timeout 60 $(mp $np) -x MCCL_LL128_TWO_SHOT=1 $B/mccl-perf $P -R 0 --csv $W/${tag}_auto2_$r.csv > $W/${tag}_auto2_$r.log 2>&1
  timeout 60 $(mp $np) $B/nccl-perf $P -R 0 --csv $W/${tag}_nccl_$r.csv > $W/${tag}_nccl_$r.log 2>&1
}
N=$(nvidia-smi -L | wc -l)
for r in 1 2; do cset $N "-b 128K -e 16M -f 2" C $r; done
python3 bench/summary.py $W C_ > $W/summaryC.txt 2>&1; pack
if [ $N -ge 3 ]; then
  export CUDA_VISIBLE_DEVICES=0,1,2
  cset 3 "-b 384K -e 12M -f 2" E 1
  P="-b 1M -e 256M -f 4 -t 1 -w 3 -n 20 -c 0 -o allgather,reducescatter"
  for v in mccl base nccl; do
    lib=$L; [ $v = base ] && lib=$L/ab/base:$L
    bin=$B/mccl-perf; [ $v = nccl ] && bin=$B/nccl-perf
    timeout 60 mpirun --allow-run-as-root --bind-to none -np 3 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x CUDA_VISIBLE_DEVICES -x LD_LIBRARY_PATH=$lib $bin $P -R 0 --csv $W/U_${v}_1.csv > $W/U_${v}_1.log 2>&1
  done
  unset CUDA_VISIBLE_DEVICES
  python3 bench/summary.py $W E_ > $W/summaryE.txt 2>&1
  python3 bench/summary.py $W U_ > $W/summaryU.txt 2>&1; pack
fi
cat $W/summaryC.txt $W/summaryE.txt $W/summaryU.txt 2>/dev/null
