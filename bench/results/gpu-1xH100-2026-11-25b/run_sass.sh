#!/usr/bin/env bash
# Counts in the generic kernel's SASS (collKernel<8, float>): calls (64-bit division), local memory, global loads.
cd "$(dirname "$0")" && tar -xJf pack.tar.xz && cd ..
B=$PWD/.carry
L=$OUT/log; mkdir -p $L
OBJ=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump | head -1)
$OBJ -sass $B/libmccl.so.0 > $L/all.sass 2>&1
grep "Function :" $L/all.sass | grep -c . 
for fn in 'collKernelILi8EfEE' 'collKernelILi8EaEE' 'llKernelILb0EfNS_' 'llLeanKernelIfLb1EEE'; do
  awk -v pat="$fn" '$0 ~ "Function : " && $0 ~ pat {f=1; print; next} f && /Function : /{f=0} f' $L/all.sass > $L/f.sass
  echo "== $fn: $(grep -c '/\*[0-9a-f]*\*/' $L/f.sass) instructions, CALL $(grep -c 'CALL' $L/f.sass), LDL $(grep -c 'LDL' $L/f.sass), STL $(grep -c 'STL' $L/f.sass), LDG $(grep -c 'LDG' $L/f.sass), BAR $(grep -c 'BAR' $L/f.sass)"
  grep -o 'CALL[^;]*' $L/f.sass | sort | uniq -c | sort -rn | head -8
done
grep -E "^\s+Function : .*(udiv|div|rem)" $L/all.sass | head
grep -oE "\.text\.[A-Za-z0-9_$]*(div|rem)[A-Za-z0-9_$]*" $L/all.sass | sort | uniq -c | head
rm -rf $L
