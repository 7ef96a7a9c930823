#!/usr/bin/env bash
# Call 2: which part of the sparse table's LL code costs the +0.3 us? On main's layout
# (connSlot, main's table; only ll_kernel.cu rebuilt, so the lean and LL-family kernels):
#   va: the branch's LL code as is (LlPeer.headNow, the head pointer taken from the
#       DevConn, the cp.async and own-head tests, which never fire on a whole table)
#   vb: only the head pointer taken from the DevConn
#   vc: only LlPeer.headNow (LlPeer 72 -> 96 bytes)
# beside main (8cd5ce4) and the branch, interleaved, three rounds; graph and eager, 8 B.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/mccl-perf ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call2.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
V="main branch va vb"
for round in 1 2 3; do
  for v in $V; do
    $M -x LD_LIBRARY_PATH=$L/ab/$v:$L $B/mccl-perf -b 8 -e 8 -t 3 -c 0 -o allreduce,allgather,sendrecv -G 100 --csv $W/graph_${v}_$round.csv > $W/graph_${v}_$round.log 2>&1 || echo "$v graph failed"
    $M -x LD_LIBRARY_PATH=$L/ab/$v:$L $B/mccl-perf -b 8 -e 8 -t 3 -c 0 -o allreduce -n 1000 --csv $W/eager_${v}_$round.csv > $W/eager_${v}_$round.log 2>&1 || echo "$v eager failed"
  done
done
pack
for v in $V; do
  $M -x LD_LIBRARY_PATH=$L/ab/$v:$L -x MCCL_PROFILE=1 $B/mccl-perf -b 8 -e 8 -n 2000 -w 100 -t 1 -c 0 -G 100 -o allreduce > $W/prof_$v.log 2>&1
done
$M -x LD_LIBRARY_PATH=$L/ab/va:$L $B/mccl-perf -b 8 -e 1M -f 8 -c 1 -o allreduce,allgather,sendrecv,broadcast > $W/check_va.log 2>&1; echo "check rc=$?" >> $W/check_va.log
python3 - "$W" > $W/summary.txt <<'PY'
import csv, glob, os, sys, collections
w = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(w, '*.csv'))):
    mode, v, rnd = os.path.basename(f)[:-4].split('_')
    for r in csv.DictReader(open(f)):
        t[(mode, r['op'], int(r['bytes']))][v].append(float(r['time_us']))
for key in sorted(t):
    print(*key, '  '.join('%s %s' % (v, '/'.join('%.2f' % x for x in t[key][v])) for v in ['main', 'branch', 'va', 'vb', 'vc']))
PY
for v in $V; do echo "$v: $(grep -h 'rank 0 LL:' $W/prof_$v.log | sed 's/.*us per step: //')"; done >> $W/summary.txt
tail -1 $W/check_va.log >> $W/summary.txt
cat $W/summary.txt
pack
