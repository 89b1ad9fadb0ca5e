#include "keel/tests/jetstream/jetstream_environment.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>

#include "absl/strings/str_cat.h"

namespace keel::jetstream::testing {
namespace {

std::unique_ptr<NatsCluster>& Cluster() {
  static std::unique_ptr<NatsCluster>* cluster = new std::unique_ptr<NatsCluster>();
  return *cluster;
}

}  // namespace

void JetStreamEnvironment::SetUp() {
  dir_ = (std::filesystem::path(::testing::TempDir()) /
          absl::StrCat("keel-nats-", getpid(), "-", nodes_))
             .string();
  std::filesystem::remove_all(dir_);
  absl::StatusOr<std::unique_ptr<NatsCluster>> cluster = NatsCluster::Start(nodes_, dir_);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  Cluster() = *std::move(cluster);
}

void JetStreamEnvironment::TearDown() {
  Cluster().reset();
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

NatsCluster* SharedCluster() { return Cluster().get(); }

std::string FreshBusName() {
  static std::atomic<int> counter{0};
  return absl::StrCat("t", getpid() % 100000, "x", counter.fetch_add(1));
}

}  // namespace keel::jetstream::testing
