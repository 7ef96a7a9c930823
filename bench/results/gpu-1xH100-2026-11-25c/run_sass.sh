#!/usr/bin/env bash
# Counts in the SASS of the Simple kernels against the generic and LL kernels (instructions, local memory, calls).
cd "$(dirname "$0")" && tar -xJf pack.tar.xz && cd ..
B=$PWD/.carry
L=$OUT/log; mkdir -p $L
OBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump | head -1)
$OBJ -sass $B/libmccl.so.0 > $L/all.sass 2>&1
for fn in 'simpleKernelIfEE' 'simpleKernelIaEE' 'simpleKernelINS_7NoArith' 'collKernelILi8EfEE' 'collKernelILi8EaEE' 'collKernelILi8ENS_7NoArith' 'llKernelILb1EfNS_10KernelArgsILi8' 'llKernelILb0EfNS_10KernelArgsILi8' 'llLeanKernelIfLb1EEE'; do
  awk -v pat="$fn" '$0 ~ "Function : " && $0 ~ pat {f=1; print; next} f && /Function : /{f=0} f' $L/all.sass > $L/f.sass
  echo "== $fn: $(grep -c '/\*[0-9a-f]*\*/' $L/f.sass) instructions, CALL $(grep -c 'CALL' $L/f.sass), LDL $(grep -c 'LDL' $L/f.sass), STL $(grep -c 'STL' $L/f.sass), LDG $(grep -c 'LDG' $L/f.sass), BAR $(grep -c 'BAR' $L/f.sass)"
done
rm -rf $L
