#!/usr/bin/env bash
# mpirun with what this project always needs: root allowed (CI runs as root),
# oversubscription (CI has 2 cores), no binding (ranks share cores).
exec mpirun --allow-run-as-root --oversubscribe --bind-to none "$@"
