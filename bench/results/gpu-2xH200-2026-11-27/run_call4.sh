#!/usr/bin/env bash
# Call 4: where the AllGather threshold lies (registered buffers, 2 x 2 - 2 x 12 MiB, the
# path forced on every size with MCCL_USER_BUFFERS_MIN_BYTES=1 against it off, three
# rounds), and every collective at the default (plain buffers) beside NCCL, 8 B - 1 GiB.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call4.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
T="-b 4M -e 24M -f 1.5 -t 1 -w 3 -n 50 -c 0 -R 1 -o allgather"
for round in 1 2 3; do
  $M -x MCCL_USER_BUFFERS_MIN_BYTES=1 $B/mccl-perf $T --csv $W/T_on_$round.csv > $W/T_on_$round.log 2>&1
  $M -x MCCL_USER_BUFFERS=0 $B/mccl-perf $T --csv $W/T_off_$round.csv > $W/T_off_$round.log 2>&1
done
A="-b 8 -e 1G -f 8 -t 1 -w 3 -n 20 -c 0 -R 0 -o allreduce,allgather,reducescatter,broadcast,reduce,sendrecv,alltoall,gather,scatter"
$M $B/mccl-perf $A --csv $W/A_mccl_1.csv > $W/A_mccl.log 2>&1
$M $B/nccl-perf $A --csv $W/A_nccl_1.csv > $W/A_nccl.log 2>&1
pack
python3 - "$W" > $W/summary.txt <<'PY'
import csv, glob, os, sys, collections
w = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(w, '[TA]_*.csv'))):
    mode, v, rnd = os.path.basename(f)[:-4].split('_')
    for r in csv.DictReader(open(f)):
        t[(mode, r['op'], int(r['bytes']))][v].append(float(r['time_us']))
for mode, vs in (('T', ['on', 'off']), ('A', ['mccl', 'nccl'])):
    print('\n%s: op bytes | %s | %s/%s (time ratio of medians)' % (mode, ' | '.join(vs), vs[1], vs[0]))
    for key in sorted(k for k in t if k[0] == mode):
        d = t[key]
        med = lambda v: sorted(d[v])[len(d[v]) // 2] if d[v] else float('nan')
        print(key[1], key[2], '|', ' | '.join('/'.join('%.2f' % x for x in d[v]) for v in vs), '| %.3f' % (med(vs[1]) / med(vs[0])))
PY
cat $W/summary.txt
pack
