#!/usr/bin/env bash
# The main job: set-up, build, and an AllReduce checked on 4 ranks under mpirun, on a
# communicator made from MPI_COMM_WORLD (host memory when no GPU is usable).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh
NP=${NP:-4}
scripts/mpirun.sh -np "$NP" "${MCCL_BUILD_DIR:-build}/mpi_examples/allreduce_world" "$@"
