#!/usr/bin/env bash
# Call 1: is the sparse table's +0.3 us placement or code? Two builds (main: 8cd5ce4 built
# now; branch: the sparse table's last build, wip/sparse-conn-table 1535f24) and NCCL, each at five --pad sizes (device memory allocated before the
# communicator, moving every later allocation), interleaved; graph and eager, 8 B - 512 B.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call1.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
G="-b 8 -e 512 -f 8 -t 3 -c 0 -o allreduce,allgather,sendrecv"
for pad in 0 256K 2M 5M 33M; do
  for v in main branch nccl; do
    lp=$L/ab/$v:$L; bin=$B/mccl-perf
    [ $v = nccl ] && { lp=$L; bin=$B/nccl-perf; }
    $M -x LD_LIBRARY_PATH=$lp $bin $G --pad $pad -G 100 --csv $W/graph_${v}_$pad.csv > $W/graph_${v}_$pad.log 2>&1 || echo "$v $pad graph failed"
    $M -x LD_LIBRARY_PATH=$lp $bin $G --pad $pad -n 1000 --csv $W/eager_${v}_$pad.csv > $W/eager_${v}_$pad.log 2>&1 || echo "$v $pad eager failed"
  done
  pack
done
for v in main branch; do
  for pad in 0 2M; do
    $M -x LD_LIBRARY_PATH=$L/ab/$v:$L -x MCCL_PROFILE=1 $B/mccl-perf -b 8 -e 8 -n 2000 -w 100 -t 1 -c 0 -G 100 -o allreduce --pad $pad > $W/prof_${v}_$pad.log 2>&1
  done
done
python3 - "$W" > $W/summary.txt <<'PY'
import csv, glob, os, sys, collections
w = sys.argv[1]
t = collections.defaultdict(dict)
for f in glob.glob(os.path.join(w, '*.csv')):
    mode, v, pad = os.path.basename(f)[:-4].split('_')
    for r in csv.DictReader(open(f)):
        t[(mode, r['op'], int(r['bytes']))][(v, pad)] = float(r['time_us'])
pads = ['0', '256K', '2M', '5M', '33M']
for key in sorted(t):
    print(*key)
    for v in ["main", "branch", "nccl"]:
        print('  %-8s' % v, ' '.join('%6.2f' % t[key].get((v, p), float('nan')) for p in pads))
PY
grep -h "LL:" $W/prof_*.log >> $W/summary.txt
cat $W/summary.txt
pack
