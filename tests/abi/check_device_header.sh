#!/bin/sh
# mccl's nccl_device.h against NVIDIA's NCCL 2.28 one:
#  1. the host-visible structs (ncclDevComm, ncclDevCommRequirements, resource and team
#     requirements, handles, ncclTeam, ncclWindow_vidmem's size) have the same sizes and
#     field offsets (device_abi_probe.cc built against each header);
#  2. a CUDA file using the device API as NCCL's examples and nccl-tests do compiles
#     against mccl's headers alone (device_api_compile.cu), when nvcc is given.
# Usage: check_device_header.sh CXX MCCL_INCLUDE NVIDIA_INCLUDE [NVCC CUDA_ARCH]
set -u
CXX=$1 MINC=$2 NINC=$3 NVCC=${4:-} ARCH=${5:-90}
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

if [ -f "$NINC/nccl_device.h" ]; then
  $CXX -std=c++17 -I"$MINC" -I"$NINC" "$HERE/device_abi_probe.cc" -o "$T/m" || bad "probe does not build against mccl's nccl_device.h"
  $CXX -std=c++17 -I"$NINC" "$HERE/device_abi_probe.cc" -o "$T/n" || bad "probe does not build against NVIDIA's nccl_device.h"
  if [ $fail = 0 ]; then
    "$T/m" >"$T/m.txt"; "$T/n" >"$T/n.txt"
    diff "$T/n.txt" "$T/m.txt" >"$T/diff" || { cat "$T/diff"; bad "struct layouts differ from NVIDIA's (< NVIDIA, > mccl)"; }
    [ "$(wc -l <"$T/m.txt")" -gt 50 ] || bad "probe printed too little"
  fi
else
  echo "no NVIDIA nccl_device.h in $NINC: layout comparison skipped"
fi
if [ -n "$NVCC" ]; then
  "$NVCC" -std=c++17 -arch=sm_$ARCH -Werror all-warnings -I"$MINC" -c "$HERE/device_api_compile.cu" -o "$T/dev.o" ||
    bad "device_api_compile.cu does not build against mccl's headers"
fi
[ $fail = 0 ] && echo "nccl_device.h: layouts match NVIDIA's; the device API example builds"
exit $fail
