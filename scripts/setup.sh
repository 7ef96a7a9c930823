#!/usr/bin/env bash
# Installs what mccl needs to build and test, with apt-get, when it is missing.
# Idempotent and quiet when everything is there (Debian 12, Ubuntu 24.04).
set -euo pipefail

PACKAGES=(build-essential cmake pkg-config libopenmpi-dev openmpi-bin libucx-dev ucx-utils
          libhwloc-dev libgtest-dev gfortran)
# Optional: clang (fuzzing) and the sanitizer runtimes come with gcc/clang.
[ "${MCCL_SETUP_FUZZ:-0}" = 1 ] && PACKAGES+=(clang libclang-rt-dev)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
