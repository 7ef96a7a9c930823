#!/usr/bin/env bash
# The GPU network path on a 2-GPU machine: the regression tests over CUDA IPC, then the
# same collectives with the GPUs forced onto UCX (NCCL_P2P_DISABLE=1, UCX_TLS=tcp and sm),
# and with MCCL_HOST_ID making the two GPUs two nodes; then mccl-perf (network path)
# against NCCL's socket transport in the same run. Binaries from scripts/gpu-carry.sh.
#   OUT=dir scripts/gpu-net-check.sh [tests|perf|all|lean]
# lean: a time-boxed subset (about 6 minutes) for a short device budget.
set -uo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-all}
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
BIN=${MCCL_BIN:-.carry}
# scripts/gpu-carry.sh packs the binaries (the device tool's 64 MiB limit).
if [ -f "$BIN/pack.tar.xz" ] && [ ! -f "$BIN/libmccl.so.0" ]; then tar -xJf "$BIN/pack.tar.xz" -C "$BIN"; fi
export LD_LIBRARY_PATH="$PWD/$BIN:${LD_LIBRARY_PATH:-}"
export NCCL_NVLS_ENABLE=0
export MCCL_TIMEOUT=${MCCL_TIMEOUT:-30}
MPIRUN="mpirun --allow-run-as-root --oversubscribe --bind-to none -x LD_LIBRARY_PATH -x NCCL_NVLS_ENABLE -x MCCL_TIMEOUT"
{ date -u; nvidia-smi -L; nvidia-smi topo -m; ucx_info -v; } > "$OUT/topo.txt" 2>&1
summary() { grep -aE '^\[  (PASSED|FAILED|SKIPPED) |FAILURE' "$1" | head -4 | tr '\n' ' '; }

if [ "$MODE" = lean ]; then
  t0=$SECONDS
  timeout 100 $MPIRUN -np 2 -x MCCL_TEST_QUICK=1 "$BIN/mccl_gpu_mpi_tests" > "$OUT/ipc_mpi.log" 2>&1
  echo "ipc mpi np2 quick: rc=$? $(summary "$OUT/ipc_mpi.log") [$((SECONDS-t0)) s]"
  timeout 90 $MPIRUN -np 2 -x NCCL_P2P_DISABLE=1 -x UCX_TLS=tcp -x MCCL_TEST_QUICK=1 -x NCCL_DEBUG=INFO \
    -x NCCL_DEBUG_SUBSYS=NET "$BIN/mccl_gpu_mpi_tests" > "$OUT/net_tcp.log" 2>&1
  echo "net p2p-disabled UCX_TLS=tcp: rc=$? $(summary "$OUT/net_tcp.log") $(grep -a -m1 'GPU network path' "$OUT/net_tcp.log" | sed 's/.*MCCL INFO //') [$((SECONDS-t0)) s]"
  timeout 60 $MPIRUN -np 2 -x MCCL_RANKS_PER_NODE=1 -x UCX_TLS=tcp -x MCCL_TEST_QUICK=1 \
    tests/mpi/fake_nodes.sh "$BIN/mccl_gpu_mpi_tests" > "$OUT/net_fake_nodes.log" 2>&1
  echo "net two fake nodes UCX_TLS=tcp: rc=$? $(summary "$OUT/net_fake_nodes.log") [$((SECONDS-t0)) s]"
  ARGS="-b 16M -e 256M -f 4 -n 3 -w 1 -o allreduce,allgather,sendrecv"
  timeout 60 $MPIRUN -np 2 -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 "$BIN/nccl-perf" $ARGS \
    --csv "$OUT/perf_nccl_socket.csv" > "$OUT/perf_nccl_socket.txt" 2>&1
  echo "nccl-perf socket: rc=$? [$((SECONDS-t0)) s]"
  for tls in tcp sm; do
    timeout 60 $MPIRUN -np 2 -x NCCL_P2P_DISABLE=1 -x UCX_TLS=$tls "$BIN/mccl-perf" $ARGS \
      --csv "$OUT/perf_mccl_$tls.csv" > "$OUT/perf_mccl_$tls.txt" 2>&1
    echo "mccl-perf UCX_TLS=$tls: rc=$? [$((SECONDS-t0)) s]"
  done
fi

if [ "$MODE" = tests ] || [ "$MODE" = all ]; then
  timeout 300 "$BIN/mccl_gpu_tests" > "$OUT/ipc_single.log" 2>&1
  echo "ipc single-process: rc=$? $(summary "$OUT/ipc_single.log")"
  timeout 200 $MPIRUN -np 2 "$BIN/mccl_gpu_mpi_tests" > "$OUT/ipc_mpi.log" 2>&1
  echo "ipc mpi np2: rc=$? $(summary "$OUT/ipc_mpi.log")"
  for tls in tcp sm; do
    timeout 240 $MPIRUN -np 2 -x NCCL_P2P_DISABLE=1 -x UCX_TLS=$tls -x MCCL_TEST_QUICK=1 -x NCCL_DEBUG=INFO \
      -x NCCL_DEBUG_SUBSYS=NET "$BIN/mccl_gpu_mpi_tests" > "$OUT/net_${tls}.log" 2>&1
    echo "net p2p-disabled UCX_TLS=$tls: rc=$? $(summary "$OUT/net_${tls}.log") $(grep -a -m1 'GPU network path' "$OUT/net_${tls}.log" | sed 's/.*MCCL INFO //')"
  done
  timeout 240 $MPIRUN -np 2 -x MCCL_RANKS_PER_NODE=1 -x UCX_TLS=tcp -x MCCL_TEST_QUICK=1 \
    tests/mpi/fake_nodes.sh "$BIN/mccl_gpu_mpi_tests" > "$OUT/net_fake_nodes.log" 2>&1
  echo "net two fake nodes UCX_TLS=tcp: rc=$? $(summary "$OUT/net_fake_nodes.log")"
fi

if [ "$MODE" = perf ] || [ "$MODE" = all ]; then
  ARGS="-b 4M -e 1G -f 4 -n 5 -w 2 -o allreduce,allgather,reducescatter,broadcast,sendrecv"
  timeout 200 $MPIRUN -np 2 -x NCCL_P2P_DISABLE=1 -x NCCL_SHM_DISABLE=1 "$BIN/nccl-perf" $ARGS \
    --csv "$OUT/perf_nccl_socket.csv" > "$OUT/perf_nccl_socket.txt" 2>&1
  echo "nccl-perf socket: rc=$?"
  for tls in tcp sm; do
    timeout 200 $MPIRUN -np 2 -x NCCL_P2P_DISABLE=1 -x UCX_TLS=$tls "$BIN/mccl-perf" $ARGS \
      --csv "$OUT/perf_mccl_$tls.csv" > "$OUT/perf_mccl_$tls.txt" 2>&1
    echo "mccl-perf UCX_TLS=$tls: rc=$?"
  done
  for ch in 2 8; do
    timeout 100 $MPIRUN -np 2 -x NCCL_P2P_DISABLE=1 -x UCX_TLS=tcp -x MCCL_NET_NCHANNELS=$ch "$BIN/mccl-perf" \
      -b 64M -e 1G -f 4 -n 5 -w 2 -o allreduce --csv "$OUT/perf_mccl_tcp_ch$ch.csv" > "$OUT/perf_mccl_tcp_ch$ch.txt" 2>&1
    echo "mccl-perf tcp channels $ch: rc=$?"
  done
fi
