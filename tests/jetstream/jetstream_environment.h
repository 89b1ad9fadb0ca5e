// The NATS servers a jetstream test binary shares: started once before its
// first test (a standalone server or a cluster, as the binary asks) and
// killed after its last, so that the binary's tests do not each pay a
// cluster's start.
#ifndef KEEL_TESTS_JETSTREAM_JETSTREAM_ENVIRONMENT_H_
#define KEEL_TESTS_JETSTREAM_JETSTREAM_ENVIRONMENT_H_

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "keel/tests/nats/nats_cluster.h"

namespace keel::jetstream::testing {

class JetStreamEnvironment : public ::testing::Environment {
 public:
  explicit JetStreamEnvironment(int nodes) : nodes_(nodes) {}
  void SetUp() override;
  void TearDown() override;

 private:
  const int nodes_;
  std::string dir_;
};

// The servers of the running environment (null before SetUp).
NatsCluster* SharedCluster();
// A bus name no other test of this process uses.
std::string FreshBusName();

}  // namespace keel::jetstream::testing

#endif  // KEEL_TESTS_JETSTREAM_JETSTREAM_ENVIRONMENT_H_
