// `keel daemon --subscriptions FILE`: the file's subscriptions deliver from
// the first start; a restart with new secrets signs with them; one whose
// fields changed keeps the daemon from starting (resource drift, naming
// the field); a bad file is refused naming it and the declaration.
#include "keel/cmd/keel/server/push/subscription_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "keel/cmd/keel/server/push/signature.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/push/push_daemon.h"

namespace keel::push_test {
namespace {

constexpr char kOldSecret[] = "the-first-secret-of-the-file";
constexpr char kNewSecret[] = "the-secret-the-file-rotated-to";

json::object Declaration(const std::string& endpoint, const std::string& secret, int batch) {
  json::object d;
  d["name"] = "filed";
  d["streams"] = "orders";
  d["endpoint"] = endpoint;
  d["batchSize"] = batch;
  d["secrets"] = json::array{secret};
  return d;
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text;
}

bool SignedWith(const ReceivedRequest& request, const std::string& secret) {
  return push::VerifySignature(secret, request.Header("keel-signature"),
                               request.Header("keel-timestamp"), request.body, absl::Now())
      .ok();
}

class SubscriptionFileTest : public ::testing::Test {
 protected:
  SubscriptionFileTest() : daemon_(dir_.Sub("data"), dir_.Sub("logs")) {
    std::filesystem::create_directories(dir_.Sub("logs"));
  }

  std::string file() { return dir_.Sub("subscriptions.json"); }

  testing::TempDir dir_;
  daemon_test::DaemonProcess daemon_;
  TestReceiver receiver_{[](const ReceivedRequest&, int) { return Reply{200}; }};
};

TEST_F(SubscriptionFileTest, DeclaresAtStartRotatesSecretsAndRefusesDrift) {
  Write(file(), json::serialize(json::array{Declaration(receiver_.url(), kOldSecret, 5)}));
  ASSERT_TRUE(daemon_.Start(0, {"--subscriptions", file()}).ok());
  {
    client::HttpClient http("127.0.0.1", daemon_.port());
    ASSERT_TRUE(PublishN(http, "orders", "order.created", 1).ok());
  }
  ASSERT_TRUE(receiver_.WaitFor([](const auto& r) { return Acknowledged(r).size() >= 1; }, kWait));
  EXPECT_TRUE(SignedWith(receiver_.requests().back(), kOldSecret));
  const uint16_t port = daemon_.port();
  ASSERT_TRUE(daemon_.Terminate().ok());

  // The same subscription with a new secret (one object, not an array).
  Write(file(), json::serialize(Declaration(receiver_.url(), kNewSecret, 5)));
  ASSERT_TRUE(daemon_.Start(port, {"--subscriptions", file()}).ok()) << daemon_.Logs();
  {
    client::HttpClient http("127.0.0.1", port);
    ASSERT_TRUE(PublishN(http, "orders", "order.created", 2).ok());
  }
  ASSERT_TRUE(receiver_.WaitFor([](const auto& r) { return Acknowledged(r).size() >= 2; }, kWait));
  EXPECT_TRUE(SignedWith(receiver_.requests().back(), kNewSecret));
  EXPECT_FALSE(SignedWith(receiver_.requests().back(), kOldSecret));
  EXPECT_EQ(SequencesOf(Acknowledged(receiver_.requests()), "orders"),
            (std::vector<uint64_t>{1, 2}));
  ASSERT_TRUE(daemon_.Terminate().ok());

  Write(file(), json::serialize(Declaration(receiver_.url(), kNewSecret, 6)));
  const absl::Status drifted = daemon_.Start(port, {"--subscriptions", file()});
  ASSERT_FALSE(drifted.ok());
  EXPECT_TRUE(absl::StrContains(drifted.message(), "exists with other settings"))
      << drifted.message();
  EXPECT_TRUE(absl::StrContains(drifted.message(), "batchSize")) << drifted.message();
}

TEST_F(SubscriptionFileTest, ABadFileIsRefusedNamingItAndTheDeclaration) {
  Write(file(), "[{\"name\":");
  absl::StatusOr<std::vector<push::PushSubscription>> read = push::ReadSubscriptionFile(file());
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(absl::StrContains(read.status().message(), file())) << read.status();

  json::object bad = Declaration(receiver_.url(), "short", 5);
  Write(file(), json::serialize(json::array{Declaration(receiver_.url(), kOldSecret, 5), bad}));
  read = push::ReadSubscriptionFile(file());
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(absl::StrContains(read.status().message(), "declaration 2")) << read.status();

  const json::object twice = Declaration(receiver_.url(), kOldSecret, 5);
  Write(file(), json::serialize(json::array{twice, twice}));
  read = push::ReadSubscriptionFile(file());
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(absl::StrContains(read.status().message(), "twice")) << read.status();

  // The daemon refuses to start on it, saying why.
  const absl::Status started = daemon_.Start(0, {"--subscriptions", file()});
  ASSERT_FALSE(started.ok());
  EXPECT_TRUE(absl::StrContains(started.message(), "declares 'filed' twice")) << started.message();
}

}  // namespace
}  // namespace keel::push_test
