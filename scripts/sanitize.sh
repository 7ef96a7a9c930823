#!/usr/bin/env bash
# Sanitizer jobs (host data path; CUDA off):
#   scripts/sanitize.sh asan   AddressSanitizer + UndefinedBehaviorSanitizer (and LSan at
#                              exit): unit, ranks-as-threads, MPI np 1..4, preload, examples,
#                              fault and soak tests, in build-asan (MCCL_ASAN_TESTS: regex;
#                              the unit tests with fast unwinding, the rest with slow)
#   scripts/sanitize.sh tsan   ThreadSanitizer: the threaded tests (ranks as threads of one
#                              process: TCP bootstrap root and ranks, concurrent communicators
#                              and groups, nonblocking init) and the fault tests (watchdog
#                              threads and the host engine across processes), in build-tsan
#                              (LargeCounts on 1-3 ranks: MCCL_TSAN_GTEST_FILTER)
# Any report fails the job (halt_on_error / exitcode). Suppressions (scripts/sanitizers)
# cover third-party libraries only, each justified there.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
MODE=${1:?usage: scripts/sanitize.sh asan|tsan}
JOBS=${MCCL_JOBS:-$(nproc)}
SUPP="$ROOT/scripts/sanitizers"
case "$MODE" in
  asan)
    DIR=${MCCL_ASAN_DIR:-build-asan}
    [ -f "$DIR/CMakeCache.txt" ] || cmake -S . -B "$DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMCCL_ASAN=ON \
      -DMCCL_ENABLE_CUDA=OFF -DMCCL_BUILD_BENCH=OFF >/dev/null
    cmake --build "$DIR" -j "$JOBS" >/dev/null
    # Slow unwinding: Open MPI and UCX are built without frame pointers, and the
    # suppressions need whole stacks to see that an allocation is theirs.
    export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:fast_unwind_on_malloc=0:detect_stack_use_after_return=0
    export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
    export LSAN_OPTIONS=suppressions=$SUPP/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0
    # Keep Open MPI's components loaded at exit so leak stacks through them have names.
    export OMPI_MCA_mca_base_component_disable_dlclose=1
    # UCX's memory hooks off (as in the TSan job). With them on, UCX (ucm) rewrites the
    # entry of libc's mmap/munmap/mremap/madvise/brk family and the GOT entries of every
    # loaded object; on some machines of the CI kind (AMD EPYC, kernel 6.18: issue 16)
    # LSan's stop-the-world tracer then faults at a near-NULL address at exit of mpi_np1
    # ("Tracer caught signal 11", 6 runs of 6), after every test passed; with the hooks
    # off it passed every run. mccl never relies on them: its UCX memory is registered
    # explicitly (ucp_mem_map) and UCX's registration cache is only an optimisation.
    # The plain ctest run keeps UCX's defaults, so the hooked path stays tested there.
    export UCX_MEM_EVENTS=no
    # 5 repetitions of each fault case: the victim rotates over every rank of np 3 and 4
    # (rank 0, the bootstrap root, included); the plain run does 20.
    export MCCL_FAULT_REPS=${MCCL_FAULT_REPS:-5}
    cd "$DIR"
    # Default: unit, ranks-as-threads, faults, MPI np 1..4, soak, preload and examples.
    # MPI np 5 and the fake-node run repeat np 1..4's code paths at twice the time under
    # ASan; MCCL_ASAN_TESTS=. runs them too.
    # The unit tests with fast unwinding: every allocation they leave behind is UCX's
    # (a context and workers, test_proxy.cc and test_sysv_hold.cc), whose first frames are
    # in UCX's own libraries and match the suppressions without a whole stack. Slow
    # unwinding on each of their many small allocations made them 44 s instead of 3
    # (2-core Intel Xeon, 2026-12-02; 0.6 s without ASan).
    if [ -z "${MCCL_ASAN_TESTS:-}" ]; then
      ASAN_OPTIONS=${ASAN_OPTIONS/fast_unwind_on_malloc=0/fast_unwind_on_malloc=1} \
        LSAN_OPTIONS=${LSAN_OPTIONS/fast_unwind_on_malloc=0/fast_unwind_on_malloc=1} \
        ctest --output-on-failure -LE gpu -R '^unit$'
    fi
    ctest --output-on-failure -j "${MCCL_TEST_JOBS:-1}" -LE gpu \
      -R "${MCCL_ASAN_TESTS:-^(threads|faults|mpi_np[1-4]|soak_np4|preload_host_np[0-9]|example_.*)\$}"
    ;;
  tsan)
    DIR=${MCCL_TSAN_DIR:-build-tsan}
    [ -f "$DIR/CMakeCache.txt" ] || cmake -S . -B "$DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMCCL_TSAN=ON \
      -DMCCL_ENABLE_CUDA=OFF -DMCCL_BUILD_BENCH=OFF -DMCCL_BUILD_EXAMPLES=OFF >/dev/null
    cmake --build "$DIR" -j "$JOBS" --target mccl_thread_tests mccl_unit_tests mccl_fault_tests >/dev/null
    export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:suppressions=$SUPP/tsan.supp"
    # UCX's memory hooks (ucm) patch madvise/mmap; under TSan they run after a thread's
    # TSan state is gone (thread exit) and crash the runtime. mccl does not need them.
    export UCX_MEM_EVENTS=no
    # The fault tests run forked multi-process ranks: watchdog threads, host engine and
    # UCX progress together, with peers dying under them. 4 repetitions: the victim
    # rotates over every rank of np 3 and 4 (3 left rank 0, the bootstrap root, out at np 4).
    export MCCL_FAULT_REPS=${MCCL_FAULT_REPS:-4}
    # LargeCounts (2^20 elements a call, every collective, four types) on 1, 2 and 3 ranks:
    # the FIFO pipeline's many steps a call, under TSan's instrumentation of every access
    # of the data loops. Its 4- and 8-rank forms run the same steps with more peers in
    # threads that take turns on CI's 2 cores, 141 of the job's 443 s (2-core Intel Xeon,
    # 2026-12-02); the plain and ASan jobs keep them. MCCL_TSAN_GTEST_FILTER= runs them too.
    export GTEST_FILTER=${MCCL_TSAN_GTEST_FILTER--Ranks/ThreadCollectives.LargeCounts/3:Ranks/ThreadCollectives.LargeCounts/4}
    cd "$DIR"
    ctest --output-on-failure -R '^(unit|threads|faults)$'
    ;;
  *)
    echo "usage: scripts/sanitize.sh asan|tsan" >&2
    exit 2
    ;;
esac
