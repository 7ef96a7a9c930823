#!/usr/bin/env bash
# Call 1: can two processes on one GPU run at once under MPS (mps_probe.cu), and what does a
# kernel round trip cost each of them there? Run from the repository root of the copy.
set -u
D=bench/results/gpu-1x-2026-12-06f
P=$D/mps_probe
W=$(mktemp -d)
{ date -u; nvidia-smi -L; nvidia-smi -q | grep -i -A1 'compute mode'; command -v nvidia-cuda-mps-control; } > $W/topo.txt 2>&1
pair() {  # NAME: both roles at once, each into its own file
  local h; h=$(mktemp -d)
  timeout 60 $P 0 $h > $W/$1_r0.txt 2>&1 &
  timeout 60 $P 1 $h > $W/$1_r1.txt 2>&1
  wait
}
pair nomps
export CUDA_MPS_PIPE_DIRECTORY=$(mktemp -d) CUDA_MPS_LOG_DIRECTORY=$(mktemp -d)
nvidia-cuda-mps-control -d > $W/mps_start.txt 2>&1; echo "rc=$?" >> $W/mps_start.txt
sleep 1
pair mps
pair mps2
echo quit | nvidia-cuda-mps-control >> $W/mps_start.txt 2>&1
sleep 1
cp $CUDA_MPS_LOG_DIRECTORY/* $W/ 2>/dev/null
unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
pair nomps2
for f in $W/*.txt; do echo "== $(basename $f)"; cat $f; done > $W/summary.txt
tar czf $OUT/call1.tgz -C $W .
cat $W/summary.txt
