#!/usr/bin/env bash
# Call 6: Simple collectives on all 24 channels from 768 KiB moved (a channel a 32 KiB, was
# 128 KiB) and Broadcast on Simple from 512 KiB (LL128 no more): this build (now) against
# the build of call 1 (prev), interleaved, three rounds, eager and in graphs, 256 KiB - 8 MiB;
# NCCL plain, registered and windows beside; then -c 1 checks and the single-process GPU
# tests of every type, op and form.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call6.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
OPS=allreduce,allgather,reducescatter,broadcast,reduce,sendrecv,alltoall
G="-b 256K -e 8M -f 2 -t 3 -c 0 -o $OPS"
for round in 1 2 3; do
  for v in now prev; do
    lp=$L; [ $v = prev ] && lp=$L/ab/prev:$L
    $M -x LD_LIBRARY_PATH=$lp $B/mccl-perf $G -G 20 --csv $W/graph_${v}_$round.csv > $W/graph_${v}_$round.log 2>&1 || echo "$v graph failed"
    $M -x LD_LIBRARY_PATH=$lp $B/mccl-perf $G -n 300 --csv $W/eager_${v}_$round.csv > $W/eager_${v}_$round.log 2>&1 || echo "$v eager failed"
  done
done
for r in 0 1 2; do
  $M -x LD_LIBRARY_PATH=$L $B/nccl-perf $G -R $r -n 300 --csv $W/eager_ncclR${r}_1.csv > $W/eager_ncclR$r.log 2>&1
  $M -x LD_LIBRARY_PATH=$L $B/nccl-perf $G -R $r -G 20 --csv $W/graph_ncclR${r}_1.csv > $W/graph_ncclR$r.log 2>&1
done
pack
timeout 120 $M -x LD_LIBRARY_PATH=$L $B/mccl-perf -b 8 -e 32M -f 4 -c 1 -n 20 -w 3 -t 1 -o $OPS > $W/check.log 2>&1; echo "check rc=$?" >> $W/check.log
timeout 120 $M -x LD_LIBRARY_PATH=$L $B/mccl-perf -b 64K -e 8M -f 2 -c 1 -n 30 -w 3 -t 1 -G 10 -o $OPS > $W/check_graph.log 2>&1; echo "check rc=$?" >> $W/check_graph.log
LD_LIBRARY_PATH=$L timeout 150 $B/mccl_gpu_tests --gtest_filter='GpuSingleProcess.EveryTypeOpAndForm:*Chained*:GpuSingleProcess.OneThreadGroups*' > $W/gpu.log 2>&1; echo "rc=$?" >> $W/gpu.log
python3 - "$W" > $W/summary.txt <<'PY'
import csv, glob, os, sys, collections
w = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(w, '*.csv'))):
    mode, v, rnd = os.path.basename(f)[:-4].split('_')
    for r in csv.DictReader(open(f)):
        t[(mode, r['op'], int(r['bytes']))][v].append(float(r['time_us']))
vs = ['now', 'prev', 'ncclR0', 'ncclR1', 'ncclR2']
print('mode op bytes |', ' | '.join(vs), '| prev/now (median) | NCCL best / now')
for key in sorted(t):
    d = t[key]
    med = lambda v: sorted(d[v])[len(d[v]) // 2] if d[v] else float('nan')
    best = min([med(v) for v in ('ncclR0', 'ncclR1', 'ncclR2') if d[v]] or [float('nan')])
    print(*key, '|', ' | '.join('/'.join('%.2f' % x for x in d[v]) for v in vs),
          '| %.3f | %.3f' % (med('prev') / med('now'), best / med('now')))
PY
grep -aH "rc=\|^\[  FAILED\|^\[  PASSED" $W/*.log >> $W/summary.txt
cat $W/summary.txt
pack
