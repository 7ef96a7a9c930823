#!/bin/bash
# Compares mccl's nccl.h with NVIDIA's and checks libmccl's exported symbols.
#   check_nccl_header.sh CC CXX MCCL_INCLUDE NVIDIA_NCCL_INCLUDE CUDA_INCLUDE LIBMCCL
# 1. every function, pnccl* alias, enum constant, macro and typedef name NVIDIA's header
#    declares is declared by mccl's (mccl may add MCCL_* names);
# 2. the ABI facts (sizes, offsets, initializers, enum and flag values) are identical
#    (abi_probe.c compiled against each header; version numbers aside);
# 3. a C++ program using __half, __nv_bfloat16 and the fp8 types builds with mccl's nccl.h
#    alone (nccl-tests does);
# 4. every function mccl's nccl.h declares, and every host function NVIDIA's nccl_device
#    headers declare, is exported by libmccl with its pnccl* alias at the same address
#    (the functions still to come are listed in PENDING);
# 5. libmccl binds its own symbols: no dynamic relocation refers to an nccl*, pnccl* or
#    mccl* symbol, so its internal calls cannot reach another library (NVIDIA's libnccl).
set -u
CC=$1 CXX=$2 MINC=$3 NINC=$4 CUDAINC=$5 LIB=$6
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
# Declared in NVIDIA's 2.28 header but not exported yet (none today).
PENDING=""

names() {  # kind file (comments left out)
  perl -0pe 's{/\*.*?\*/}{}gs; s{//[^\n]*}{}g' "$2" >"$T/nocomment.h"
  set -- "$1" "$T/nocomment.h"
  case $1 in
    func) grep -oE '\bp?nccl[A-Za-z0-9_]*[[:space:]]*\(' "$2" | sed -E 's/[[:space:]]*\($//' |
            grep -vE '^(NCCL_VERSION|ncclRedOp_dummy_t)$' ;;
    enum) grep -oE '\bnccl[A-Za-z0-9_]*[[:space:]]*=' "$2" | sed -E 's/[[:space:]]*=$//' ;;
    macro) grep -oE '^[[:space:]]*#[[:space:]]*define[[:space:]]+NCCL_[A-Za-z0-9_]*' "$2" | awk '{print $NF}' |
             sed 's/^define//' ;;
    type) grep -oE '(\}[[:space:]]*|typedef struct [A-Za-z0-9_]+\*[[:space:]]*)nccl[A-Za-z0-9_]*_t;' "$2" |
            grep -oE 'nccl[A-Za-z0-9_]*_t' ;;
  esac | sort -u
}
for kind in func enum macro type; do
  names $kind "$NINC/nccl.h" >"$T/n.$kind"
  names $kind "$MINC/nccl.h" >"$T/m.$kind"
  missing=$(comm -23 "$T/n.$kind" "$T/m.$kind")
  [ -n "$missing" ] && bad "mccl's nccl.h lacks these ${kind} names of NVIDIA's: $missing"
  echo "$kind: $(wc -l <"$T/n.$kind") in NVIDIA's header, all declared by mccl's" | grep -v '^$' >/dev/null
done
nfunc=$(wc -l <"$T/n.func")
[ "$nfunc" -ge 80 ] || bad "only $nfunc functions found in NVIDIA's header (the extraction is broken)"

# 2. ABI facts.
CUDAFLAGS=""
[ -f "$CUDAINC/cuda_runtime.h" ] && CUDAFLAGS="-I$CUDAINC"
$CC -std=c11 -I"$NINC" $CUDAFLAGS "$HERE/abi_probe.c" -o "$T/probe_nv" || bad "abi_probe.c does not build against NVIDIA's header"
$CC -std=c11 -Wall -Werror -I"$MINC" $CUDAFLAGS "$HERE/abi_probe.c" -o "$T/probe_mccl" || bad "abi_probe.c does not build against mccl's header"
$CC -std=c11 -Wall -Werror -DMCCL_NO_CUDA_HEADERS -I"$MINC" "$HERE/abi_probe.c" -o "$T/probe_mccl_nocuda" ||
  bad "abi_probe.c does not build against mccl's header without the CUDA headers"
if [ -x "$T/probe_nv" ] && [ -x "$T/probe_mccl" ]; then
  "$T/probe_nv" | grep -v '^version' >"$T/abi.nv"
  "$T/probe_mccl" | grep -v '^version' >"$T/abi.mccl"
  diff "$T/abi.nv" "$T/abi.mccl" >"$T/abi.diff" || { bad "ABI differs from NVIDIA's (< NVIDIA, > mccl):"; cat "$T/abi.diff"; }
  "$T/probe_mccl_nocuda" | grep -v '^version' | diff "$T/abi.mccl" - >/dev/null || bad "ABI differs without the CUDA headers"
  "$T/probe_mccl" | grep -q '^version code 22803 major 2 minor 28 patch 3' || bad "mccl's nccl.h is not API level 2.28.3"
fi

# 3. The CUDA number types through nccl.h alone.
if [ -n "$CUDAFLAGS" ]; then
  $CXX -std=c++17 -I"$MINC" $CUDAFLAGS -c "$HERE/fp_types.cc" -o "$T/fp.o" || bad "__half/__nv_bfloat16/fp8 not declared by mccl's nccl.h"
fi

# 4. Exports.
nm -D --defined-only "$LIB" | awk '{print $1, $3}' | sed 's/@.*//' >"$T/exports"
exported() {  # name: exported, and its pnccl* twin at the same address
  grep -q " $1\$" "$T/exports" || { bad "libmccl does not export $1"; return; }
  case $1 in pnccl*) return ;; esac
  a=$(awk -v s="p$1" '$2 == s {print $1}' "$T/exports")
  b=$(awk -v s="$1" '$2 == s {print $1}' "$T/exports")
  [ -n "$a" ] && [ "$a" = "$b" ] || bad "p$1 is not an alias of $1 (${a:-missing} vs $b)"
}
for f in $(names func "$MINC/nccl.h"); do
  case " $PENDING " in *" $f "*) continue ;; esac
  exported "$f"
done
grep -q " mcclAlltoAllv\$" "$T/exports" || bad "libmccl does not export mcclAlltoAllv"
# The host functions of NVIDIA's device API headers (ncclDevCommCreate, the teams, the
# requirement builders, ncclLLA2ACalcSlots, ...).
devfuncs=$(cat "$NINC"/nccl_device.h "$NINC"/nccl_device/*.h 2>/dev/null | perl -0pe 's{/\*.*?\*/}{}gs; s{//[^\n]*}{}g' |
  tr '\n' ' ' | grep -oE 'NCCL_EXTERN_C +__host__ [^(;{]*\bnccl[A-Za-z0-9_]*[[:space:]]*\(' |
  grep -oE 'nccl[A-Za-z0-9_]*[[:space:]]*\($' | tr -d '( ' | sort -u)
if [ -f "$NINC/nccl_device.h" ]; then
  [ "$(echo "$devfuncs" | wc -w)" -ge 8 ] || bad "only $(echo "$devfuncs" | wc -w) host functions found in NVIDIA's device headers"
  for f in $devfuncs; do exported "$f"; done
fi

# 5. Symbolic binding.
relocs=$(readelf -rW "$LIB" | awk '{print $5}' | sed 's/@.*//' | grep -E '^p?(nccl|mccl)[A-Z]' | sort -u)
[ -n "$relocs" ] && bad "libmccl resolves its own symbols at run time (not -Bsymbolic): $relocs"

[ $fail = 0 ] && echo "nccl.h matches NVIDIA's ($nfunc functions with their pnccl aliases); libmccl exports them and binds its own symbols"
exit $fail
