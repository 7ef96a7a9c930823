#!/bin/bash
# interleaved host A/B over variants: name=libdir
cd /work/main
for r in $(seq 1 ${R:-4}); do for v in ${VARS:-before=/tmp/ab/tiles now=/work/main/build/src}; do
  echo "== ${v%%=*} r$r"
  mpirun --allow-run-as-root ${BIND:---bind-to core} -np ${NP:-2} -x MCCL_DEVICE=host -x LD_LIBRARY_PATH=${v#*=} build/bench/mccl-perf --from-mpi -b ${B:-8} -e ${E:-1K} -f 2 -t 7 -o ${OPS:-allreduce} 2>/dev/null | grep -v "^# "
done; done
