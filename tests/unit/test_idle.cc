// When a waiting rank yields its core (core/idle.h): MCCL_IDLE_YIELD forces it either way;
// auto follows Open MPI's oversubscription verdict, else counts the node's ranks against
// its online CPUs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "core/idle.h"
#include "scoped_env.h"

using mccl::idleYieldsSoon;
using mccl_test::ScopedEnv;

TEST(IdleYield, ForcedEitherWay) {
  {
    ScopedEnv env({{"MCCL_IDLE_YIELD", "1"}, {"OMPI_MCA_mpi_oversubscribe", "0"}});
    EXPECT_TRUE(idleYieldsSoon(1));
  }
  {
    ScopedEnv env({{"MCCL_IDLE_YIELD", "0"}, {"OMPI_MCA_mpi_oversubscribe", "1"}});
    EXPECT_FALSE(idleYieldsSoon(100000));
  }
}

TEST(IdleYield, AutoFollowsOpenMpisVerdict) {
  {
    ScopedEnv env({{"OMPI_MCA_mpi_oversubscribe", "1"}});
    EXPECT_TRUE(idleYieldsSoon(1));
  }
  {
    ScopedEnv env({{"OMPI_MCA_mpi_oversubscribe", "0"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "100000"}});
    EXPECT_FALSE(idleYieldsSoon(100000));
  }
}

TEST(IdleYield, AutoCountsRanksAgainstCpus) {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  ASSERT_GT(cpus, 0);
  ScopedEnv env({{"MCCL_IDLE_YIELD", "auto"},
                 {"OMPI_MCA_mpi_oversubscribe", ""},  // as without mpirun
                 {"OMPI_COMM_WORLD_LOCAL_SIZE", "0"},
                 {"MPI_LOCALNRANKS", "0"}});
  EXPECT_FALSE(idleYieldsSoon(1));
  EXPECT_FALSE(idleYieldsSoon(static_cast<int>(cpus)));
  EXPECT_TRUE(idleYieldsSoon(static_cast<int>(cpus) + 1));
  const std::string more = std::to_string(cpus + 1);
  {
    // The job's ranks on the node count even where this communicator holds one of them.
    ScopedEnv job({{"OMPI_COMM_WORLD_LOCAL_SIZE", more.c_str()}});
    EXPECT_TRUE(idleYieldsSoon(1));
  }
  {
    ScopedEnv job({{"MPI_LOCALNRANKS", more.c_str()}});
    EXPECT_TRUE(idleYieldsSoon(1));
  }
}
