// The driver conformance suite against real nats-server processes: a
// standalone server (each test's bus has a JetStream stream of its own) or,
// built with KEEL_JETSTREAM_NODES=3, a three-node cluster (every test's bus
// on one shared stream with three replicas, so that the suite does not
// create a raft group per test).
#include "keel/core/config.h"
#include "keel/tests/conformance/conformance.h"
#include "keel/tests/jetstream/jetstream_environment.h"

#ifndef KEEL_JETSTREAM_NODES
#define KEEL_JETSTREAM_NODES 1
#endif

namespace {

using ::keel::Config;
using ::keel::conformance::Target;
using ::keel::jetstream::testing::FreshBusName;
using ::keel::jetstream::testing::SharedCluster;

constexpr int kNodes = KEEL_JETSTREAM_NODES;

Config BusConfig() {
  Config config;
  config.Set("servers", SharedCluster()->servers());
  config.Set("bus", FreshBusName());
  if (kNodes > 1) {
    config.Set("stream", "KEEL_CONFORMANCE");
    config.Set("replicas", "3");
  }
  return config;
}

Target JetStreamTarget() {
  Target target;
  target.label = kNodes > 1 ? "jetstream_cluster" : "jetstream";
  target.driver = "jetstream";
  target.config = [](const std::string&) { return BusConfig(); };
  target.retention_config = [](const std::string&, uint64_t max_events) {
    Config config = BusConfig();
    config.Set("max_events_per_stream", std::to_string(max_events));
    return config;
  };
  return target;
}

}  // namespace

KEEL_INSTANTIATE_CONFORMANCE(JetStream, JetStreamTarget());

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new keel::jetstream::testing::JetStreamEnvironment(kNodes));
  return RUN_ALL_TESTS();
}
