#!/bin/sh
# Host communicators without room in /dev/shm: the small collectives' shared-memory segment
# cannot be made, every rank turns the path off at the same operation with a warning, and
# the engine runs every collective (the thread tests must pass, and the warning must appear).
# Needs a private mount namespace (root); without one the test is reported as skipped.
#   no_shm.sh <mccl_thread_tests>
set -u
tests=$1
if ! unshare -m true 2>/dev/null; then
  echo "no private mount namespace here (unshare -m): skipped"
  exit 77
fi
out=$(unshare -m sh -c "mount -t tmpfs -o size=16k tmpfs /dev/shm && MCCL_DEVICE=host NCCL_DEBUG=WARN \
  '$tests' --gtest_filter='Ranks/ThreadCollectives.EveryTypeOpAndForm/*:Ranks/ThreadCollectives.GroupMixingOldAndNewCalls/*'" 2>&1)
rc=$?
echo "$out" | tail -n 5
if [ $rc -ne 0 ]; then echo "the thread tests failed without shared memory (rc $rc)"; exit 1; fi
if ! echo "$out" | grep -q "run on the engine, not in shared memory"; then
  echo "no warning: shared memory was not tried, or did not fail"
  exit 1
fi
echo "passed: every collective on the engine, with the warning"
