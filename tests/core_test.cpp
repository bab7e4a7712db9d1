#include <gtest/gtest.h>

#include "greensched/core/cluster.hpp"

TEST(Cluster, Placeholder) {
  SUCCEED();
}
