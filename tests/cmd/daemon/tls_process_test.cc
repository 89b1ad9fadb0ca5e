// TLS of the real `keel daemon` binary (`--tls-cert`, `--tls-key`,
// `--tls-client-ca`): the client library, SSE with Last-Event-ID resume and
// the CLI over it; certificates checked both ways; a new certificate on
// SIGHUP while open streams go on. The tests make their own CAs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/cli.h"
#include "keel/cmd/keel/command.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/cmd/run_keel.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/test_certificates.h"

namespace keel::daemon_test {
namespace {

using ::keel::testing::HasErrorKind;
using ::keel::testing::MakeTestCertificates;
using ::keel::testing::RunKeel;
using ::keel::testing::TestCertificates;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

client::ClientOptions TrustingCa(const std::string& ca) {
  client::ClientOptions options;
  options.tls = {.enabled = true, .ca_file = ca};
  return options;
}

client::SseOptions FollowOver(const client::ClientTls& tls, const std::string& stream) {
  client::SseOptions options;
  options.stream = stream;
  options.tls = tls;
  return options;
}

class TlsProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(certs_, MakeTestCertificates(dir_.path().string()));
  }

  // Starts the daemon with the server certificate (copied, so a test can
  // replace it) and `extra` flags.
  void StartDaemon(std::vector<std::string> extra = {}) {
    std::filesystem::copy_file(certs_.server_cert, cert_);
    std::filesystem::copy_file(certs_.server_key, key_);
    extra.insert(extra.end(), {"--tls-cert", cert_, "--tls-key", key_});
    ASSERT_OK(daemon_.Start(0, extra));
  }

  std::string HttpsAddress() const { return absl::StrCat("https://127.0.0.1:", daemon_.port()); }

  testing::TempDir dir_;
  TestCertificates certs_;
  const std::string cert_ = dir_.Sub("daemon.pem");
  const std::string key_ = dir_.Sub("daemon.key");
  DaemonProcess daemon_{dir_.Sub("data"), dir_.path().string()};
};

// A client trusting the daemon's CA publishes, replays and follows over
// TLS; an SSE reader that disconnects resumes with Last-Event-ID and gets
// exactly the events after its last one.
TEST_F(TlsProcessTest, PublishReplayAndSseResumeOverTls) {
  StartDaemon();
  client::HttpClient http("127.0.0.1", daemon_.port(), TrustingCa(certs_.ca));
  for (int i = 1; i <= 3; ++i) ASSERT_OK(Publish(http, "orders", "t", absl::StrCat(i)).status());
  ASSERT_OK_AND_ASSIGN(std::vector<json::object> replayed, ReplayAll(http, "orders"));
  EXPECT_EQ(replayed.size(), 3u);

  client::SseOptions follow = FollowOver(TrustingCa(certs_.ca).tls, "orders");
  follow.after = "earliest";
  ASSERT_OK_AND_ASSIGN(auto sse, client::SseReader::Open("127.0.0.1", daemon_.port(), follow));
  ASSERT_OK_AND_ASSIGN(auto first, ReadEvents(*sse, 2));
  EXPECT_THAT(SequencesOf(first), ElementsAre(1, 2));
  const std::string resume = sse->last_event_id();
  sse->Close();

  for (int i = 4; i <= 5; ++i) ASSERT_OK(Publish(http, "orders", "t", absl::StrCat(i)).status());
  client::SseOptions again = FollowOver(TrustingCa(certs_.ca).tls, "orders");
  again.last_event_id = resume;
  ASSERT_OK_AND_ASSIGN(auto resumed, client::SseReader::Open("127.0.0.1", daemon_.port(), again));
  ASSERT_OK_AND_ASSIGN(auto rest, ReadEvents(*resumed, 3));
  EXPECT_THAT(SequencesOf(rest), ElementsAre(3, 4, 5));
  // Live: an event published now reaches the open stream.
  ASSERT_OK(Publish(http, "orders", "t", "6").status());
  ASSERT_OK_AND_ASSIGN(auto live, ReadEvents(*resumed, 1));
  EXPECT_THAT(SequencesOf(live), ElementsAre(6));
}

// The CLI speaks TLS with an https:// server address and --ca-file.
TEST_F(TlsProcessTest, TheCliPublishesAndReplaysWithCaFile) {
  StartDaemon();
  auto published = RunKeel({"publish", "--server", HttpsAddress(), "--ca-file", certs_.ca,
                            "--stream", "cli", "--type", "t", "--data", "{\"n\":1}"});
  ASSERT_EQ(published.code, cli::kExitOk) << published.err;
  auto replayed =
      RunKeel({"replay", "--server", HttpsAddress(), "--ca-file", certs_.ca, "--stream", "cli"});
  ASSERT_EQ(replayed.code, cli::kExitOk) << replayed.err;
  EXPECT_THAT(replayed.out, HasSubstr("\"n\":1"));
  auto tailed = RunKeel({"tail", "--server", HttpsAddress(), "--ca-file", certs_.ca, "--stream",
                         "cli", "--after", "earliest", "--count", "1"});
  ASSERT_EQ(tailed.code, cli::kExitOk) << tailed.err;
  EXPECT_THAT(tailed.out, HasSubstr("\"n\":1"));
}

// A certificate the client cannot check is refused by the client, and a
// plain HTTP request gets no answer from a TLS port.
TEST_F(TlsProcessTest, AnUntrustedCertificateAndPlainHttpFail) {
  StartDaemon();
  testing::TempDir other_dir;
  ASSERT_OK_AND_ASSIGN(TestCertificates other, MakeTestCertificates(other_dir.path().string()));
  client::HttpClient untrusting("127.0.0.1", daemon_.port(), TrustingCa(other.ca));
  absl::StatusOr<client::ClientResponse> refused = untrusting.Get("/v1/streams");
  EXPECT_THAT(refused.status(), HasErrorKind(ErrorKind::kUnavailable));
  EXPECT_THAT(refused.status().message(), HasSubstr("TLS handshake failed"));
  // A certificate for 127.0.0.1 does not pass for another name of it.
  client::HttpClient wrong_name("localhost", daemon_.port(), TrustingCa(certs_.ca));
  EXPECT_THAT(wrong_name.Get("/v1/streams").status().message(), HasSubstr("TLS handshake failed"));
  client::HttpClient plain("127.0.0.1", daemon_.port());
  EXPECT_FALSE(plain.Get("/v1/streams").ok());
}

// With --tls-client-ca, a client without a certificate that CA signed is
// refused at the handshake; one with it is served.
TEST_F(TlsProcessTest, ClientCertificatesAreRequiredWhenAsked) {
  StartDaemon({"--tls-client-ca", certs_.ca});
  client::HttpClient anonymous("127.0.0.1", daemon_.port(), TrustingCa(certs_.ca));
  EXPECT_FALSE(Publish(anonymous, "orders", "t", "1").ok());
  client::ClientOptions with_cert = TrustingCa(certs_.ca);
  with_cert.tls.cert_file = certs_.client_cert;
  with_cert.tls.key_file = certs_.client_key;
  client::HttpClient known("127.0.0.1", daemon_.port(), with_cert);
  ASSERT_OK_AND_ASSIGN(PublishedEvent event, Publish(known, "orders", "t", "1"));
  EXPECT_EQ(event.sequence, 1u);
}

// SIGHUP re-reads the certificate: new connections get the new one (signed
// by another CA here), an SSE stream opened before goes on, and a bad file
// keeps the certificate in use.
TEST_F(TlsProcessTest, SighupServesANewCertificateWithoutDroppingStreams) {
  StartDaemon();
  client::SseOptions follow = FollowOver(TrustingCa(certs_.ca).tls, "orders");
  follow.after = "earliest";
  ASSERT_OK_AND_ASSIGN(auto sse, client::SseReader::Open("127.0.0.1", daemon_.port(), follow));

  testing::TempDir next_dir;
  ASSERT_OK_AND_ASSIGN(TestCertificates next, MakeTestCertificates(next_dir.path().string()));
  std::filesystem::copy_file(next.server_cert, cert_,
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(next.server_key, key_,
                             std::filesystem::copy_options::overwrite_existing);
  ASSERT_OK(daemon_.Signal(SIGHUP));
  client::HttpClient renewed("127.0.0.1", daemon_.port(), TrustingCa(next.ca));
  const absl::Time deadline = absl::Now() + kWait;
  absl::StatusOr<client::ClientResponse> answer = renewed.Get("/v1/streams");
  while (!answer.ok() && absl::Now() < deadline) {  // The reload runs on the signal thread.
    absl::SleepFor(absl::Milliseconds(20));
    answer = renewed.Get("/v1/streams");
  }
  ASSERT_OK(answer.status()) << daemon_.Logs();
  client::HttpClient outdated("127.0.0.1", daemon_.port(), TrustingCa(certs_.ca));
  EXPECT_FALSE(outdated.Get("/v1/streams").ok());

  ASSERT_OK(Publish(renewed, "orders", "t", "1").status());
  ASSERT_OK_AND_ASSIGN(auto delivered, ReadEvents(*sse, 1));
  EXPECT_THAT(SequencesOf(delivered), ElementsAre(1));

  std::ofstream(key_, std::ios::trunc) << "not a key\n";
  ASSERT_OK(daemon_.Signal(SIGHUP));
  const std::string kKept = "TLS certificate not re-read, keeping the previous one";
  while (absl::Now() < deadline && daemon_.Logs().find(kKept) == std::string::npos) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_THAT(daemon_.Logs(), HasSubstr(kKept));
  client::HttpClient still("127.0.0.1", daemon_.port(), TrustingCa(next.ca));
  EXPECT_OK(Publish(still, "orders", "t", "2").status());
}

// Both files or neither: one alone is a usage error, as is a missing file.
TEST(TlsFlagsTest, OneFileAloneOrAMissingFileIsAUsageError) {
  testing::TempDir dir;
  auto alone = RunKeel({"daemon", "--data-dir", dir.Sub("d"), "--tls-cert", dir.Sub("x.pem")});
  EXPECT_EQ(alone.code, cli::kExitUsage);
  EXPECT_THAT(alone.err, HasSubstr("both --tls-cert and --tls-key"));
  auto missing = RunKeel({"daemon", "--data-dir", dir.Sub("d"), "--tls-cert", dir.Sub("x.pem"),
                          "--tls-key", dir.Sub("x.key")});
  EXPECT_EQ(missing.code, cli::kExitUsage);
  EXPECT_THAT(missing.err, HasSubstr("--tls-cert"));
}

}  // namespace
}  // namespace keel::daemon_test
