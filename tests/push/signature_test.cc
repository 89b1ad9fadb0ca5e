// Receivers verify deliveries with the recipe of rfcs/0010 ("Verifying a
// delivery"), computed here with OpenSSL directly rather than through
// Keel's own signer.
#include "keel/cmd/keel/server/push/signature.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "keel/tests/push/push_daemon.h"

namespace keel::push_test {
namespace {

constexpr char kOld[] = "the-old-secret-0123456789";
constexpr char kNew[] = "the-new-secret-9876543210";

std::string Hex(const unsigned char* bytes, unsigned int n) {
  std::string out;
  for (unsigned int i = 0; i < n; ++i) absl::StrAppend(&out, absl::Hex(bytes[i], absl::kZeroPad2));
  return out;
}

// The documented check: HMAC-SHA256(secret, timestamp + "." + body) as hex
// equals one "v1=" entry of Keel-Signature, and the timestamp is recent.
bool ReceiverAccepts(const std::string& secret, const ReceivedRequest& request,
                     absl::Time now = absl::Now()) {
  const std::string timestamp = request.Header("keel-timestamp");
  int64_t seconds = 0;
  if (!absl::SimpleAtoi(timestamp, &seconds) ||
      absl::AbsDuration(now - absl::FromUnixSeconds(seconds)) > absl::Minutes(5)) {
    return false;
  }
  const std::string message = timestamp + "." + request.body;
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac, &length);
  const std::string expected = "v1=" + Hex(mac, length);
  for (absl::string_view entry : absl::StrSplit(request.Header("keel-signature"), ',')) {
    if (entry == expected) return true;
  }
  return false;
}

TEST(PushSignatureTest, ReceiversVerifyTamperingAndReplaysFailAndRotationKeepsDeliveriesValid) {
  PushDaemon daemon;
  ASSERT_TRUE(daemon.Start().ok());
  std::unique_ptr<client::HttpClient> http = daemon.NewClient();
  TestReceiver receiver([](const ReceivedRequest&, int) { return Reply{200}; });
  json::object declaration;
  declaration["name"] = "signed";
  declaration["streams"] = "orders";
  declaration["endpoint"] = receiver.url();
  declaration["secrets"] = json::array{kOld};
  absl::StatusOr<client::ClientResponse> created = CreateSubscription(*http, declaration);
  ASSERT_TRUE(created.ok() && created->status == 201) << created->body;
  // The answer never shows a secret.
  EXPECT_EQ(created->body.find(kOld), std::string::npos);
  ASSERT_TRUE(PublishN(*http, "orders", "order.created", 1).ok());
  ASSERT_TRUE(receiver.WaitFor([](const auto& r) { return r.size() >= 1; }, kWait));

  ReceivedRequest request = receiver.requests()[0];
  EXPECT_TRUE(ReceiverAccepts(kOld, request));
  EXPECT_FALSE(ReceiverAccepts(kNew, request));
  EXPECT_TRUE(push::VerifySignature(kOld, request.Header("keel-signature"),
                                    request.Header("keel-timestamp"), request.body, absl::Now())
                  .ok());
  ReceivedRequest tampered = request;
  tampered.body.replace(tampered.body.find("\"n\":1"), 5, "\"n\":9");
  EXPECT_FALSE(ReceiverAccepts(kOld, tampered));
  EXPECT_FALSE(push::VerifySignature(kOld, tampered.Header("keel-signature"),
                                     tampered.Header("keel-timestamp"), tampered.body, absl::Now())
                   .ok());
  // Replayed ten minutes later: refused for its timestamp.
  EXPECT_FALSE(ReceiverAccepts(kOld, request, absl::Now() + absl::Minutes(10)));
  EXPECT_FALSE(push::VerifySignature(kOld, request.Header("keel-signature"),
                                     request.Header("keel-timestamp"), request.body,
                                     absl::Now() + absl::Minutes(10))
                   .ok());

  // Rotation: new first, old still valid; receivers holding either accept.
  absl::StatusOr<client::ClientResponse> rotated =
      http->PostJson("/v1/subscriptions/signed:secrets",
                     absl::StrCat("{\"secrets\":[\"", kNew, "\",\"", kOld, "\"]}"));
  ASSERT_TRUE(rotated.ok() && rotated->status == 200) << rotated->body;
  ASSERT_TRUE(PublishN(*http, "orders", "order.created", 2).ok());
  ASSERT_TRUE(receiver.WaitFor([](const auto& r) { return r.size() >= 2; }, kWait));
  request = receiver.requests()[1];
  EXPECT_TRUE(ReceiverAccepts(kNew, request));
  EXPECT_TRUE(ReceiverAccepts(kOld, request));

  // The old secret retired: only the new one signs — also after a restart.
  rotated = http->PostJson("/v1/subscriptions/signed:secrets",
                           absl::StrCat("{\"secrets\":[\"", kNew, "\"]}"));
  ASSERT_TRUE(rotated.ok() && rotated->status == 200) << rotated->body;
  ASSERT_TRUE(daemon.Restart().ok());
  http = daemon.NewClient();
  ASSERT_TRUE(PublishN(*http, "orders", "order.created", 3).ok());
  ASSERT_TRUE(receiver.WaitFor([](const auto& r) { return r.size() >= 3; }, kWait));
  request = receiver.requests()[2];
  EXPECT_TRUE(ReceiverAccepts(kNew, request));
  EXPECT_FALSE(ReceiverAccepts(kOld, request));
}

}  // namespace
}  // namespace keel::push_test
