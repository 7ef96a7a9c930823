#!/usr/bin/env bash
# Call 6 (the final build): what the user-buffer path would give point-to-point now that
# plain buffers are imported, for the next step (a sender that starts on the FIFO and
# switches when the offer comes, so that both ends need not agree): Send/Recv (both ways),
# AlltoAll, Gather, Scatter, Broadcast on plain buffers with the path forced from 4 MiB a
# message (MCCL_USER_BUFFERS_MIN_BYTES) against the default, NCCL registered beside, two
# rounds.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS -x LD_LIBRARY_PATH=$L"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call6.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
P="-b 8M -e 1G -f 4 -t 1 -w 3 -n 20 -c 0 -o sendrecv,alltoall,gather,scatter,broadcast"
for round in 1 2; do
  $M -x MCCL_USER_BUFFERS_MIN_BYTES=4194304 $B/mccl-perf $P -R 0 --csv $W/P_forced_$round.csv > $W/P_forced_$round.log 2>&1
  $M $B/mccl-perf $P -R 0 --csv $W/P_default_$round.csv > $W/P_default_$round.log 2>&1
  $M $B/nccl-perf $P -R 1 --csv $W/P_ncclreg_$round.csv > $W/P_ncclreg_$round.log 2>&1
done
pack
python3 - "$W" > $W/summary.txt <<'PY'
import csv, glob, os, sys, collections
w = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(w, 'P_*.csv'))):
    mode, v, rnd = os.path.basename(f)[:-4].split('_')
    for r in csv.DictReader(open(f)):
        t[(r['op'], int(r['bytes']))][v].append(float(r['time_us']))
vs = ['forced', 'default', 'ncclreg']
print('op bytes | forced | default | ncclreg | default/forced | ncclreg/forced | ncclreg/default (time ratios of medians)')
for key in sorted(t):
    d = t[key]
    med = lambda v: sorted(d[v])[len(d[v]) // 2] if d[v] else float('nan')
    print(key[0], key[1], '|', ' | '.join('/'.join('%.1f' % x for x in d[v]) for v in vs),
          '| %.3f | %.3f | %.3f' % (med('default') / med('forced'), med('ncclreg') / med('forced'), med('ncclreg') / med('default')))
PY
cat $W/summary.txt
pack
