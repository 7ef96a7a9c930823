#!/usr/bin/env bash
# A measurement build of libmccl whose kernels of one translation unit carry more of
# MCCL_PROFILE's marks (compiled in, they cost the default path):
#   scripts/kernel-profile.sh direct [OUT]  the direct kernels' phases (direct_kernel.cu,
#                                           MCCL_DIRECT_PROFILE)
#   scripts/kernel-profile.sh ll [OUT]      the lean LL kernel's block start in parts
#                                           (ll_kernel.cu, MCCL_LL_PROFILE)
# It compiles that translation unit again with the build tree's own flags, then links
# libmccl.so.0 from it and the tree's other objects into OUT (default build-prof/). The build
# tree itself is left as it is; build it first (cmake --build build). MCCL_PROFILE_STEP=compile
# or link: one step only (the compile may run beside the tree's own build, the link after it).
# MCCL_PROFILE_DEFS="-DNAME=VALUE ...": more definitions for that compile (an experiment's
# variant of the kernels, measured beside the tree's own).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
case ${1:-} in
  direct) TU=direct_kernel; DEF=MCCL_DIRECT_PROFILE ;;
  ll) TU=ll_kernel; DEF=MCCL_LL_PROFILE ;;
  *) echo "usage: $0 direct|ll [OUT]" >&2; exit 2 ;;
esac
B=${MCCL_BUILD_DIR:-build}
OUT=${2:-build-prof}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
cd "$B/src"
flags=CMakeFiles/mccl_objs.dir/flags.make
get() { sed -n "s/^$1 = //p" "$flags"; }
step=${MCCL_PROFILE_STEP:-all}
if [ "$step" != link ]; then
  # shellcheck disable=SC2046  # the flags split on spaces on purpose
  /usr/local/cuda/bin/nvcc $(get CUDA_DEFINES) -D$DEF=1 ${MCCL_PROFILE_DEFS:-} $(get CUDA_INCLUDES) $(get CUDA_FLAGS) \
    -c "$ROOT/src/kernels/collectives/$TU.cu" -o "$OUT/${TU}_prof.o"
fi
if [ "$step" != compile ]; then
  cmd=$(sed -e "s#CMakeFiles/mccl_objs.dir/kernels/collectives/$TU.cu.o#$OUT/${TU}_prof.o#" \
            -e "s#-o libmccl.so.0.1.0#-o $OUT/libmccl.so.0#" CMakeFiles/mccl.dir/link.txt)
  eval "$cmd"
  echo "$OUT/libmccl.so.0"
fi
