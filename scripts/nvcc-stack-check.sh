#!/usr/bin/env bash
# Compiler launcher of mccl's CUDA sources (CUDA_COMPILER_LAUNCHER in src/CMakeLists.txt):
# runs the nvcc command it is given with ptxas's resource report, keeps that report next to
# the object (<object>.res) and fails the build when a kernel's per-thread stack exceeds
# the budget. The driver keeps local memory for the largest stack of any kernel launched,
# for every thread slot of the GPU (about 270,000 on an H200), for the life of the
# process: 4 KiB of stack costs the user 1 GiB of device memory.
#   nvcc-stack-check.sh BUDGET_BYTES nvcc args...
# Only warnings and errors reach the build log; the report itself stays in the .res file.
set -uo pipefail
budget=$1
shift
obj=
prev=
for a in "$@"; do
  [ "$prev" = "-o" ] && obj=$a
  prev=$a
done
report=$(mktemp)
"$@" --resource-usage 2>"$report"
rc=$?
grep -v '^ptxas info' "$report" | grep -v '^    [0-9]* bytes stack frame' >&2
if [ $rc -ne 0 ] || [ -z "$obj" ]; then
  rm -f "$report"
  exit $rc
fi
# "Compiling entry function 'K' for 'sm_90'", "N bytes stack frame, N bytes spill stores,
# ...", "Used N registers, ..., S bytes cumulative stack size": one line a kernel in the
# report, "stack registers spill-stores kernel".
awk -v budget="$budget" '
  /Compiling entry function/ { match($0, /function \x27[^\x27]*\x27/); kernel = substr($0, RSTART + 10, RLENGTH - 11); spill = 0 }
  /bytes spill stores/ && kernel != "" { if (match($0, /[0-9]+ bytes spill stores/)) spill = substr($0, RSTART, RLENGTH) + 0 }
  /Used [0-9]+ registers/ && kernel != "" {
    stack = 0
    if (match($0, /[0-9]+ bytes cumulative stack size/)) stack = substr($0, RSTART, RLENGTH) + 0
    match($0, /Used [0-9]+ registers/); regs = substr($0, RSTART + 5, RLENGTH - 15) + 0
    print stack, regs, spill, kernel
    if (stack > budget) bad = bad sprintf("  %s: %d bytes of stack per thread\n", kernel, stack)
    kernel = ""
  }
  END { if (bad != "") { printf "error: kernel stack over the budget of %d bytes (MCCL_KERNEL_STACK_BUDGET):\n%s", budget, bad > "/dev/stderr"; exit 1 } }
' "$report" >"$obj.res"
check=$?
rm -f "$report"
if [ $check -ne 0 ]; then
  rm -f "$obj"
  exit 1
fi
exit 0
