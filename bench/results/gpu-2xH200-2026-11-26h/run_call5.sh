#!/usr/bin/env bash
# Call 5: Simple at 512 KiB - 4 MiB on more channels than the planner gives it there (one a
# 128 KiB moved: ReduceScatter of 1 MiB takes 8, two 64 KiB steps each, call 4), forced
# with NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS = 8, 16, 24, 32; and LL at 16 and 24 channels
# (NCCL's 24); eager and in graphs, against mccl's default.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32 LD_LIBRARY_PATH=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH"
W=$(mktemp -d)
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
G="-b 512K -e 4M -f 2 -t 3 -c 0 -o reducescatter,allgather,allreduce,broadcast,reduce"
run() {  # name proto channels
  local x=(); [ -n "$2" ] && x+=(-x NCCL_PROTO=$2); [ -n "$3" ] && x+=(-x NCCL_MIN_NCHANNELS=$3 -x NCCL_MAX_NCHANNELS=$3)
  $M "${x[@]}" $B/mccl-perf $G -n 300 --csv $W/eager_$1.csv > $W/eager_$1.log 2>&1
  $M "${x[@]}" $B/mccl-perf $G -G 20 --csv $W/graph_$1.csv > $W/graph_$1.log 2>&1
}
run default "" ""
for c in 8 16 24 32; do run S$c Simple $c; done
for c in 16 24; do run L$c LL $c; done
python3 - "$W" > $W/summary.txt <<'PY'
import csv, glob, os, sys, collections
w = sys.argv[1]
t = collections.defaultdict(dict)
for f in sorted(glob.glob(os.path.join(w, '*.csv'))):
    mode, v = os.path.basename(f)[:-4].split('_')
    for r in csv.DictReader(open(f)):
        t[(mode, r['op'], int(r['bytes']))][v] = float(r['time_us'])
vs = ['default', 'S8', 'S16', 'S24', 'S32', 'L16', 'L24']
print('mode op bytes |', ' | '.join(vs), '| best')
for k in sorted(t):
    d = t[k]
    b = min((d[v], v) for v in vs if v in d)
    print(*k, '|', ' | '.join('%.2f' % d[v] if v in d else '-' for v in vs), '| %s %.2f' % (b[1], b[0]))
PY
cat $W/summary.txt
tar -czf "$OUT/call5.tgz" -C "$W" .
