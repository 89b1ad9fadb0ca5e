// https endpoints: delivery over TLS to a receiver whose certificate chains
// to the CA the daemon was given (--push-ca-file), and no delivery to one
// it cannot verify — those POSTs fail as "no answer" and are retried.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "keel/tests/push/delivery_fixture.h"
#include "keel/tests/testing/test_certificates.h"

namespace keel::push_test {
namespace {

using ::testing::ElementsAreArray;

class PushHttpsTest : public PushDeliveryTest {
 protected:
  void SetUp() override {
    absl::StatusOr<testing::TestCertificates> made =
        testing::MakeTestCertificates(certs_dir_.path().string());
    ASSERT_TRUE(made.ok()) << made.status();
    certs_ = *made;
    absl::StatusOr<testing::TestCertificates> other =
        testing::MakeTestCertificates(certs_dir_.path().string(), "other-");
    ASSERT_TRUE(other.ok()) << other.status();
    other_ = *other;
    daemon_.set_push_ca_file(certs_.ca);
    PushDeliveryTest::SetUp();
  }

  testing::TempDir certs_dir_;
  testing::TestCertificates certs_;
  testing::TestCertificates other_;  // Of a CA the daemon does not trust.
};

TEST_F(PushHttpsTest, DeliversOverTlsToAVerifiedEndpoint) {
  TestReceiver receiver([](const ReceivedRequest&, int) { return Reply{200}; },
                        ReceiverTls{certs_.server_cert, certs_.server_key});
  ASSERT_TRUE(absl::StartsWith(receiver.url(), "https://"));
  json::object declaration = FastRetryDeclaration("secure", "orders", receiver.url());
  declaration["batchSize"] = 3;
  declaration["timeoutMs"] = 5000;
  Create(declaration);
  for (int i = 1; i <= 10; ++i) ASSERT_TRUE(PublishN(*http_, "orders", "order.created", i).ok());
  ASSERT_TRUE(receiver.WaitFor(
      [](const std::vector<ReceivedRequest>& r) { return Acknowledged(r).size() >= 10; }, kWait));
  EXPECT_THAT(SequencesOf(Acknowledged(receiver.requests()), "orders"),
              ElementsAreArray(OneTo(10)));
  EXPECT_FALSE(receiver.requests().front().Header("keel-signature").empty());
}

TEST_F(PushHttpsTest, RefusesAnEndpointWhoseCertificateItCannotVerify) {
  TestReceiver receiver([](const ReceivedRequest&, int) { return Reply{200}; },
                        ReceiverTls{other_.server_cert, other_.server_key});
  json::object declaration = FastRetryDeclaration("unverified", "orders", receiver.url());
  declaration["timeoutMs"] = 5000;
  Create(declaration);
  ASSERT_TRUE(PublishN(*http_, "orders", "order.created", 1).ok());
  ASSERT_TRUE(DescribeUntil("unverified", [](const json::object& status) {
    return status.at("delivery").at("failures").to_number<int>() >= 2;
  }));
  const json::object status = Describe("unverified");
  EXPECT_TRUE(
      absl::StartsWith(std::string(status.at("delivery").at("lastError").as_string()), "no answer"))
      << json::serialize(status);
  EXPECT_EQ(status.at("delivery").at("lastStatus").to_number<int>(), 0);
  EXPECT_TRUE(receiver.requests().empty());  // Nothing was read off the handshake.
}

}  // namespace
}  // namespace keel::push_test
