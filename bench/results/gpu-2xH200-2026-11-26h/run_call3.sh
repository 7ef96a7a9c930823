#!/usr/bin/env bash
# Call 3: where the protocols cross, now that every launch overlaps the one before (PDL):
# LL, LL128 and Simple forced (NCCL_PROTO) against mccl's default, eager and in CUDA graphs,
# 256 KiB - 8 MiB, for the collectives still below NCCL's best there (ReduceScatter 1-2 MiB,
# AllGather 2 MiB) and AllReduce; NCCL plain and windows beside.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32 LD_LIBRARY_PATH=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call3.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
G="-b 256K -e 8M -f 2 -t 3 -c 0 -o reducescatter,allgather,allreduce"
for v in default LL LL128 Simple; do
  p=""; [ $v != default ] && p=$v
  NCCL_PROTO=$p $M -x NCCL_PROTO $B/mccl-perf $G -n 300 --csv $W/eager_$v.csv > $W/eager_$v.log 2>&1
  NCCL_PROTO=$p $M -x NCCL_PROTO $B/mccl-perf $G -G 20 --csv $W/graph_$v.csv > $W/graph_$v.log 2>&1
done
for r in 0 2; do
  $M $B/nccl-perf $G -R $r -n 300 --csv $W/eager_ncclR$r.csv > $W/eager_ncclR$r.log 2>&1
  $M $B/nccl-perf $G -R $r -G 20 --csv $W/graph_ncclR$r.csv > $W/graph_ncclR$r.log 2>&1
done
$M -x NCCL_DEBUG=INFO -x NCCL_DEBUG_SUBSYS=TUNING $B/nccl-perf -b 512K -e 4M -f 2 -t 1 -c 0 -n 5 -w 1 -o reducescatter,allgather > $W/nccl_tuning.log 2>&1
python3 - "$W" > $W/summary.txt <<'PY'
import csv, glob, os, sys, collections
w = sys.argv[1]
t = collections.defaultdict(dict)
for f in sorted(glob.glob(os.path.join(w, '*.csv'))):
    mode, v = os.path.basename(f)[:-4].split('_')
    for r in csv.DictReader(open(f)):
        t[(mode, r['op'], int(r['bytes']))][v] = float(r['time_us'])
vs = ['default', 'LL', 'LL128', 'Simple', 'ncclR0', 'ncclR2']
print('mode op bytes |', ' | '.join(vs), '| best forced | nccl best / default')
for k in sorted(t):
    d = t[k]
    forced = min((d[v], v) for v in ['LL', 'LL128', 'Simple'] if v in d)
    nb = min(d.get('ncclR0', 1e9), d.get('ncclR2', 1e9))
    print(*k, '|', ' | '.join('%.2f' % d[v] if v in d else '-' for v in vs), '| %s %.2f | %.3f' % (forced[1], forced[0], nb / d['default']))
PY
grep -a "ReduceScatter\|AllGather" $W/nccl_tuning.log | grep -a -i "proto\|algo\|channel" | sort | uniq | head -20 >> $W/summary.txt
cat $W/summary.txt
pack
