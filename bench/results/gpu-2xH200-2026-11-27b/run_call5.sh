#!/usr/bin/env bash
# Call 5: the final build at its defaults (plain outputs imported from their second use;
# AllGather from 6 MiB a rank and AllReduce's final data from 10 MiB on the user-buffer
# path), every collective on plain buffers 8 B - 2 GiB beside NCCL plain and registered,
# one round each, and AllReduce / AllGather 16 MiB - 2 GiB a second round.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call5.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
A="-b 8 -e 2G -f 8 -t 1 -w 3 -n 20 -c 0 -o allreduce,allgather,reducescatter,broadcast,reduce,sendrecv,alltoall,gather,scatter"
$M $B/mccl-perf $A -R 0 --csv $W/A_mccl_1.csv > $W/A_mccl.log 2>&1
$M $B/nccl-perf $A -R 0 --csv $W/A_nccl_1.csv > $W/A_nccl.log 2>&1
$M $B/nccl-perf $A -R 1 --csv $W/A_ncclreg_1.csv > $W/A_ncclreg.log 2>&1
pack
P="-b 16M -e 2G -f 2 -t 1 -w 3 -n 20 -c 0 -o allreduce,allgather"
$M $B/mccl-perf $P -R 0 --csv $W/P_mccl_1.csv > $W/P_mccl.log 2>&1
$M $B/nccl-perf $P -R 0 --csv $W/P_nccl_1.csv > $W/P_nccl.log 2>&1
$M $B/nccl-perf $P -R 1 --csv $W/P_ncclreg_1.csv > $W/P_ncclreg.log 2>&1
pack
python3 - "$W" > $W/summary.txt <<'PY'
import csv, glob, os, sys, collections
w = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(w, '[AP]_*.csv'))):
    mode, v, rnd = os.path.basename(f)[:-4].split('_')
    for r in csv.DictReader(open(f)):
        t[(r['op'], int(r['bytes']))][v].append(float(r['time_us']))
vs = ['mccl', 'nccl', 'ncclreg']
print('op bytes | mccl | nccl | ncclreg | nccl/mccl | ncclreg/mccl | best/mccl (time ratios of medians, >1: mccl faster)')
for key in sorted(t):
    d = t[key]
    med = lambda v: sorted(d[v])[len(d[v]) // 2] if d[v] else float('nan')
    best = min(med('nccl'), med('ncclreg'))
    print(key[0], key[1], '|', ' | '.join('/'.join('%.2f' % x for x in d[v]) for v in vs),
          '| %.3f | %.3f | %.3f' % (med('nccl') / med('mccl'), med('ncclreg') / med('mccl'), best / med('mccl')))
PY
cat $W/summary.txt
pack
