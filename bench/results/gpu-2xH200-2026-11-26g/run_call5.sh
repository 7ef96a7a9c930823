#!/usr/bin/env bash
# Call 5: programmatic dependent launch for the lean LL kernels (MCCL_PDL, branch exp/pdl
# on top of the landed table). The same build with MCCL_PDL=1 (pdl) and 0 (nopdl), and the
# landed build before it (.carry/ab/base), interleaved, three rounds, graph and eager,
# 8 B - 32 KiB; NCCL beside; then -c 1 checks and every single-process GPU test with PDL on.
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
M="mpirun --allow-run-as-root --bind-to none -np 2 -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x CUDA_DEVICE_MAX_CONNECTIONS"
W=$(mktemp -d)
pack() { tar -czf "$OUT/call5.tgz" -C "$W" .; }
date -u +%FT%TZ > $W/when.txt; nvidia-smi -L >> $W/when.txt
G="-b 8 -e 32K -f 64 -t 3 -c 0 -o allreduce,allgather,sendrecv,broadcast,reduce"
for round in 1 2 3; do
  for v in base pdl nopdl; do
    lp=$L; pdl=1; [ $v = base ] && lp=$L/ab/base:$L; [ $v = nopdl ] && pdl=0
    $M -x LD_LIBRARY_PATH=$lp -x MCCL_PDL=$pdl $B/mccl-perf $G -G 100 --csv $W/graph_${v}_$round.csv > $W/graph_${v}_$round.log 2>&1 || echo "$v graph failed"
    $M -x LD_LIBRARY_PATH=$lp -x MCCL_PDL=$pdl $B/mccl-perf $G -n 1000 --csv $W/eager_${v}_$round.csv > $W/eager_${v}_$round.log 2>&1 || echo "$v eager failed"
  done
done
$M -x LD_LIBRARY_PATH=$L $B/nccl-perf $G -G 100 --csv $W/graph_nccl_1.csv > $W/graph_nccl_1.log 2>&1
$M -x LD_LIBRARY_PATH=$L $B/nccl-perf $G -n 1000 --csv $W/eager_nccl_1.csv > $W/eager_nccl_1.log 2>&1
pack
$M -x LD_LIBRARY_PATH=$L -x MCCL_PROFILE=1 $B/mccl-perf -b 8 -e 8 -n 2000 -w 100 -t 1 -c 0 -G 100 -o allreduce > $W/prof_pdl.log 2>&1
timeout 90 $M -x LD_LIBRARY_PATH=$L $B/mccl-perf -b 8 -e 4M -f 8 -c 1 -n 30 -w 5 -t 1 -o allreduce,allgather,reducescatter,broadcast,reduce,sendrecv,alltoall > $W/check.log 2>&1; echo "check rc=$?" >> $W/check.log
timeout 90 $M -x LD_LIBRARY_PATH=$L $B/mccl-perf -b 8 -e 64K -f 8 -c 1 -n 200 -w 5 -t 1 -G 20 -o allreduce,allgather,sendrecv > $W/check_graph.log 2>&1; echo "check rc=$?" >> $W/check_graph.log
pack
LD_LIBRARY_PATH=$L timeout 250 $B/mccl_gpu_tests > $W/gpu_single.log 2>&1; echo "rc=$?" >> $W/gpu_single.log
python3 - "$W" > $W/summary.txt <<'PY'
import csv, glob, os, sys, collections
w = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(w, '*_[123].csv'))):
    mode, v, rnd = os.path.basename(f)[:-4].split('_')
    for r in csv.DictReader(open(f)):
        t[(mode, r['op'], int(r['bytes']))][v].append(float(r['time_us']))
for key in sorted(t):
    print(*key, '  '.join('%s %s' % (v, '/'.join('%.2f' % x for x in t[key][v])) for v in ['base', 'pdl', 'nopdl', 'nccl']))
PY
{ grep -h "LL:\|host us" $W/prof_pdl.log; grep -H "rc=\|FAILED\|PASSED" $W/*.log | grep -v "OK \]"; } >> $W/summary.txt
cat $W/summary.txt
pack
