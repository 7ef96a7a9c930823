#!/usr/bin/env bash
# Call 6 (two GPUs, the build of this session's last code): every single-process GPU test
# on two GPUs, every MPI GPU test at np 2 (MCCL_TEST_QUICK: the user-buffer test's full
# sizes run past two minutes), the device-API tests at np 2, the README example.
RUN_TIMEOUT=120
cd "$(dirname "$0")/../../.."
. bench/device_call.sh
timeout 280 $B/mccl_gpu_tests > $W/t_single.log 2>&1; res "single process, 2 GPUs" $? $W/t_single.log
timeout 200 $M -x MCCL_TEST_QUICK=1 $B/mccl_gpu_mpi_tests > $W/t_mpi.log 2>&1; res "MPI np 2 (quick)" $? $W/t_mpi.log
timeout 60 $M $B/mccl_gpu_devapi_tests > $W/t_devapi.log 2>&1; res "device API np 2" $? $W/t_devapi.log
timeout 30 $M $B/allreduce_world > $W/t_example.log 2>&1; echo "example: rc=$? $(tail -1 $W/t_example.log)" >> $T
run b mccl 1 "-b 32M -e 256M -f 2 -t 3 -c 0 -o broadcast,reduce"
finish call6 b
