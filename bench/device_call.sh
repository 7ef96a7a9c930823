# Sourced by the device calls' scripts (bench/results/<dir>/run_callN.sh), run on the GPU
# machine from the repository root of the copy: unpacks the carried pack (.carry/pack.tar.xz,
# made here by scripts/gpu-carry.sh or by hand), sets what every call sets, and gives
#   W      the folder of this call's logs and tables (topo.txt: date and GPUs)
#   M      mpirun of NP ranks (2 unless set) with the environment and the pack's libraries
#   res NAME RC LOG      a test run's verdict and its first failures, into $W/tests.txt
#   run SET VARIANT ROUND "ARGS" [VAR=VALUE ...]
#          one mccl-perf run (nccl-perf for variants named nccl*; the pack's old/ libraries,
#          the build to compare against, for variants named old*) into
#          $W/SET_VARIANT_ROUND.csv, the naming bench/summary.py reads (no _ in the names)
#   mpitests FILTER LIMIT
#          the MPI GPU tests of FILTER on NP processes (MCCL_SHARED_GPU=2), at most LIMIT
#          seconds: the verdict and every test's line into $W/tests.txt
#   tb SET VARIANT ROUND "ARGS" [VAR=VALUE ...]
#          one mccl-threads-bench run (ranks as threads of one process; old* variants on the
#          old/ libraries, a variant named as a folder of the pack, or of its ab/
#          (scripts/gpu-carry.sh MCCL_AB), on that folder's) into
#          $W/SET_VARIANT_ROUND.txt, the naming bench/threads_ab.py reads
#   gtests NR FILTER LIMIT
#          the single-process GPU tests of FILTER on NR ranks as threads sharing the GPU(s)
#          (MCCL_TEST_RANKS; 4 channels above 2 ranks, else 16), at most LIMIT seconds:
#          the verdict and every test's line into $W/tests.txt, copied to $OUT/tests.txt
#   mpsStart / mpsStop   the MPS control daemon (several processes at once on one GPU, not in
#          time slices), its pipe and log folders fresh; mpsStart adds the pipe to M
#   preload NP LIMIT     libmccl_mpi's GPU tests on NP processes sharing the GPU(s), at most
#          LIMIT seconds: the verdict and every test's line into $W/tests.txt
#   tinyAb ROUNDS VARIANT...
#          8-byte MPI_Allreduce through libmccl_mpi on NP processes (micro_mpi_tiny 2000
#          route,flag; after mpsStart where they share a GPU), replayed and launched
#          (MCCL_MPI_GRAPH_BYTES=0), the variants alternating in each round (a variant is a
#          folder of the pack's ab/, else the pack's own libmccl), into
#          $W/ab_VARIANT_{replay,launch}_ROUND.txt; then their table into $W/tests.txt
#   finish NAME SET...   summary.txt (tests, then per set summary.py of its .csv files or
#          threads_ab.py of its .txt files, then errors), printed and packed with every log
#          into $OUT/NAME.tgz
# Two builds of libmccl do not fit one pack beside the tree (the device tool's 64 MiB; each
# compresses to 25 MB): carry the second alone as .carry-ab/NAME.tar.xz in a second call on the
# machine the first left warm, whose .carry stays unpacked there
# (bench/results/gpu-1x-2026-12-07f/run_call2.sh).
set -uo pipefail
B=.carry
[ -f $B/libmccl.so.0 ] || tar -xJf $B/pack.tar.xz -C $B
export NCCL_NVLS_ENABLE=0 MCCL_TIMEOUT=20 CUDA_DEVICE_MAX_CONNECTIONS=32
L=$PWD/$B
export LD_LIBRARY_PATH=$L
NP=${NP:-2}
M="mpirun --allow-run-as-root --oversubscribe --bind-to none -np $NP -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT -x LD_LIBRARY_PATH=$L"
W=$(mktemp -d)
{ date -u; nvidia-smi -L; } > $W/topo.txt 2>&1
T=$W/tests.txt
RUN_TIMEOUT=${RUN_TIMEOUT:-90}

gtestLines() {  # LOG: each test's verdict line, colours taken out
  sed 's/\x1b\[[0-9;]*m//g' "$1" | grep -aE '^\[ +(OK|FAILED|SKIPPED) '
}

res() {
  echo "$1: rc=$2 $(grep -aE 'PASSED|FAILED' "$3" | tr -d '\033' | tr '\n' ' ')" >> $T
  grep -a -m8 -E 'rank [0-9]+:|Failure|expected|Which is|FAILED' "$3" | tr -d '\033' | cut -c1-300 >> $T
}

run() {
  local set=$1 v=$2 r=$3 a=$4
  shift 4
  local x=() bin=$B/mccl-perf
  case $v in
    nccl*) bin=$B/nccl-perf ;;
    old*) x+=(-x LD_LIBRARY_PATH=$L/old:$L) ;;  # the later -x wins
  esac
  for e in "$@"; do x+=(-x "$e"); done
  # $a and $M split on spaces on purpose: they are argument lists.
  timeout $RUN_TIMEOUT $M "${x[@]}" $bin $a --csv $W/${set}_${v}_$r.csv > $W/${set}_${v}_$r.log 2>&1 ||
    echo "$set $v $r rc=$?" >> $W/errors.txt
}

gtests() {
  local nr=$1 f=$2 limit=$3
  env MCCL_SHARED_GPU=1 MCCL_TEST_RANKS=$nr MCCL_TIMEOUT=10 NCCL_MAX_NCHANNELS=$((nr > 2 ? 4 : 16)) \
    timeout $limit $B/mccl_gpu_tests --gtest_filter="$f" > $W/t_$nr.log 2>&1
  res "tests $nr ranks" $? $W/t_$nr.log
  gtestLines $W/t_$nr.log >> $T
  cp $T $OUT/tests.txt
}

# After a run the timeout ended: its ranks outlive the killed mpirun and keep the GPU (under
# MPS a later process then fails to set the device, 2026-12-07 call 2).
reap() { pkill -9 -f "[.]carry/$1" 2>/dev/null; sleep 1; }

mpitests() {  # FILTER LIMIT: the MPI GPU tests of FILTER on NP processes sharing the GPU(s)
  local f=$1 limit=$2 rc
  # (MCCL_TEST_QUICK=1 in the caller's environment: CollectivesFromMpiComm to 1M elements, not
  # 64M: 126-189 s alone under MPS on one GPU.)
  timeout $limit $M -x MCCL_SHARED_GPU=2 -x MCCL_DUMP_SCHEDULE=0 ${MCCL_TEST_QUICK:+-x MCCL_TEST_QUICK} \
    $B/mccl_gpu_mpi_tests --gtest_filter="$f" > $W/mpi.log 2>&1
  rc=$?
  [ $rc = 124 ] && reap mccl_gpu_mpi_tests
  res "mpi np$NP" $rc $W/mpi.log
  gtestLines $W/mpi.log >> $T
}

tb() {
  local set=$1 v=$2 r=$3 a=$4
  shift 4
  local lp=$L
  case $v in old*) lp=$L/old:$L ;; esac
  [ -f $L/$v/libmccl.so.0 ] && lp=$L/$v:$L
  [ -f $L/ab/$v/libmccl.so.0 ] && lp=$L/ab/$v:$L  # scripts/gpu-carry.sh MCCL_AB
  # $a splits on spaces on purpose: an argument list.
  env LD_LIBRARY_PATH=$lp "$@" timeout $RUN_TIMEOUT $B/mccl-threads-bench $a > $W/${set}_${v}_$r.txt 2>&1 ||
    echo "$set $v $r rc=$?" >> $W/errors.txt
}

mpsStart() {
  export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
  nvidia-cuda-mps-control -d >> $W/mps.txt 2>&1
  M="$M -x CUDA_MPS_PIPE_DIRECTORY"
}

mpsStop() { echo quit | nvidia-cuda-mps-control >> $W/mps.txt 2>&1; }

preload() {
  local np=$1 limit=$2
  local rc
  timeout $limit ${M/-np $NP/-np $np} -x MCCL_SHARED_GPU=2 $B/mccl_preload_gpu_tests > $W/preload$np.log 2>&1
  rc=$?
  [ $rc = 124 ] && reap mccl_preload_gpu_tests
  res "preload suite np $np" $rc $W/preload$np.log
  gtestLines $W/preload$np.log >> $T
  cp $T $OUT/tests.txt
}

tinyAb() {
  local rounds=$1 v lp mode round
  shift
  local MM="$M -x MCCL_SHARED_GPU=2"
  for round in $(seq "$rounds"); do
    for v in "$@"; do
      lp=$L
      [ -f $L/ab/$v/libmccl.so.0 ] && lp=$L/ab/$v:$L  # (the later -x wins)
      timeout 60 $MM -x LD_LIBRARY_PATH=$lp $B/micro_mpi_tiny 2000 route,flag > $W/ab_${v}_replay_$round.txt 2>&1 ||
        echo "tinyAb $v replay $round rc=$?" >> $W/errors.txt
      timeout 60 $MM -x LD_LIBRARY_PATH=$lp -x MCCL_MPI_GRAPH_BYTES=0 $B/micro_mpi_tiny 2000 route,flag \
        > $W/ab_${v}_launch_$round.txt 2>&1 || echo "tinyAb $v launch $round rc=$?" >> $W/errors.txt
    done
  done
  {
    echo "== micro_mpi_tiny route / flag, us a call (slower rank's mean, median of 5 trials)"
    for mode in replay launch; do
      for round in $(seq "$rounds"); do
        for v in "$@"; do
          echo "$mode $round $v: $(grep -E '^(route|flag) ' $W/ab_${v}_${mode}_$round.txt | awk '{print $1, $2}' | tr '\n' ' ')"
        done
      done
    done
  } >> $T
}

finish() {
  local name=$1
  shift
  {
    [ -f $T ] && cat $T
    for s in "$@"; do
      if ls $W/${s}_*.csv > /dev/null 2>&1; then python3 bench/summary.py $W ${s}_
      else python3 bench/threads_ab.py $W $s; fi
    done
    [ -f $W/errors.txt ] && cat $W/errors.txt
  } > $W/summary.txt 2>&1
  cat $W/summary.txt
  tar -czf "$OUT/$name.tgz" -C "$W" .
}
