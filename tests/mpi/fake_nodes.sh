#!/bin/sh
# Runs a program as one rank of a job spread over fake nodes: MCCL_HOST_ID gives ranks
# [k*N, (k+1)*N) the host identity "fakenode<k>" (N = MCCL_RANKS_PER_NODE, default 2),
# so one machine looks like several nodes to mccl's topology and transports.
#   mpirun -np 4 tests/mpi/fake_nodes.sh ./mccl_mpi_tests
# With MCCL_FAKE_NODES_ROUND_ROBIN=K the ranks are dealt round robin over K nodes instead
# (rank r on "fakenode<r mod K>"): a scattered mapping (issue 17).
rank=${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}
per=${MCCL_RANKS_PER_NODE:-2}
if [ -n "$MCCL_FAKE_NODES_ROUND_ROBIN" ]; then
  MCCL_HOST_ID="fakenode$((rank % MCCL_FAKE_NODES_ROUND_ROBIN))"
else
  MCCL_HOST_ID="fakenode$((rank / per))"
fi
export MCCL_HOST_ID
exec "$@"
