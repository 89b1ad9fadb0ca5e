// Credentials of the real `keel daemon` binary as a child process (rfcs/0004
// §13): `keel token hash` lines in the --auth-tokens file, re-read on SIGHUP
// without dropping a connection, and the refusal to listen beyond loopback
// without credentials.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/cli.h"
#include "keel/cmd/keel/command.h"
#include "keel/cmd/keel/server/access_tokens.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/cmd/run_keel.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::daemon_test {
namespace {

using ::keel::testing::RunKeel;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kOldToken[] = "old-token-before-rotation-01";
constexpr char kNewToken[] = "new-token-after-rotation-02";

// The line `keel token hash` prints for `token` with `scopes`.
std::string HashLine(const std::string& dir, const std::string& token,
                     std::vector<std::string> scopes) {
  const std::string token_file = absl::StrCat(dir, "/token");
  std::ofstream(token_file) << token << "\n";
  std::vector<std::string> args = {"token", "hash", "--token-file", token_file};
  for (const std::string& scope : scopes) args.insert(args.end(), {"--scope", scope});
  const auto run = RunKeel(args);
  EXPECT_EQ(run.code, cli::kExitOk) << run.err;
  return run.out;
}

// Runs `keel <args>` as a child process; its exit code and output.
std::pair<int, std::string> RunKeelProcess(const std::string& args) {
  FILE* pipe = popen(absl::StrCat(KEEL_BINARY, " ", args, " 2>&1").c_str(), "r");
  std::string output;
  char buffer[4096];
  while (size_t read = fread(buffer, 1, sizeof(buffer), pipe)) output.append(buffer, read);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

TEST(TokenHashTest, PrintsTheHashLineOfTheTokenNeverTheToken) {
  testing::TempDir dir;
  const std::string line = HashLine(dir.path().string(), kOldToken, {"read:orders.", "publish"});
  ASSERT_OK_AND_ASSIGN(server::Grant grant,
                       server::Grant::Parse(std::vector<std::string>{"read:orders.", "publish"}));
  EXPECT_EQ(line, server::TokenHashLine(kOldToken, grant) + "\n");
  EXPECT_THAT(line, Not(HasSubstr(kOldToken)));
  const std::string token_file = dir.Sub("short");
  std::ofstream(token_file) << "short\n";
  auto short_token = RunKeel({"token", "hash", "--token-file", token_file, "--scope", "read"});
  EXPECT_EQ(short_token.code, cli::kExitUsage);
  EXPECT_THAT(short_token.err, HasSubstr("at least 16"));
  auto bad_scope = RunKeel({"token", "hash", "--token-file", token_file, "--scope", "write"});
  EXPECT_EQ(bad_scope.code, cli::kExitUsage);
  EXPECT_THAT(bad_scope.err, HasSubstr("'write' is not a scope"));
}

// The tokens file changes and the daemon gets SIGHUP: the old token is
// refused from then on, the new one accepted, and an SSE stream opened with
// the old token before goes on.
TEST(AuthProcessTest, SighupReReadsTheTokensFileWithoutDroppingConnections) {
  testing::TempDir dir;
  const std::string tokens = dir.Sub("tokens");
  std::ofstream(tokens) << HashLine(dir.path().string(), kOldToken, {"publish", "read"});
  DaemonProcess daemon(dir.Sub("data"), dir.path().string());
  ASSERT_OK(daemon.Start(0, {"--auth-tokens", tokens}));
  client::HttpClient old_client("127.0.0.1", daemon.port(),
                                client::ClientOptions{.token = kOldToken});
  ASSERT_OK(Publish(old_client, "orders", "t", "1").status());
  client::SseOptions follow;
  follow.stream = "orders";
  follow.after = "earliest";
  follow.token = kOldToken;
  ASSERT_OK_AND_ASSIGN(auto sse, client::SseReader::Open("127.0.0.1", daemon.port(), follow));
  ASSERT_OK_AND_ASSIGN(auto first, ReadEvents(*sse, 1));
  EXPECT_THAT(SequencesOf(first), ::testing::ElementsAre(1));

  std::ofstream(tokens, std::ios::trunc)
      << HashLine(dir.path().string(), kNewToken, {"publish", "read"});
  ASSERT_OK(daemon.Signal(SIGHUP));
  client::HttpClient new_client("127.0.0.1", daemon.port(),
                                client::ClientOptions{.token = kNewToken});
  // The reload happens on the daemon's signal thread: wait until it took.
  const absl::Time deadline = absl::Now() + kWait;
  int status = 0;
  while (absl::Now() < deadline) {
    ASSERT_OK_AND_ASSIGN(auto response, new_client.Get("/v1/streams/orders"));
    status = response.status;
    if (status != 401) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_EQ(status, 200) << daemon.Logs();
  ASSERT_OK_AND_ASSIGN(auto refused, old_client.Get("/v1/streams/orders"));
  EXPECT_EQ(refused.status, 401) << refused.body;
  ASSERT_OK(Publish(new_client, "orders", "t", "2").status());
  // The stream opened before the reload is still open and delivers.
  ASSERT_OK_AND_ASSIGN(auto second, ReadEvents(*sse, 1));
  EXPECT_THAT(SequencesOf(second), ::testing::ElementsAre(2));

  // A broken file keeps the daemon on what it had, and it says why.
  std::ofstream(tokens, std::ios::trunc) << "garbage line\n";
  ASSERT_OK(daemon.Signal(SIGHUP));
  const std::string kKept = "credentials not re-read, keeping the previous ones";
  while (absl::Now() < deadline && !absl::StrContains(daemon.Logs(), kKept)) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_THAT(daemon.Logs(), HasSubstr(absl::StrCat(kKept, ": access tokens, line 1")));
  ASSERT_OK(Publish(new_client, "orders", "t", "3").status());
  ASSERT_OK_AND_ASSIGN(int code, daemon.Terminate());
  EXPECT_EQ(code, 0) << daemon.Logs();
}

// The first version's `write <token>` lines keep working, and the daemon
// warns that the file holds a token in clear text.
TEST(AuthProcessTest, TheFirstVersionsClearTextLinesStillWorkWithAWarning) {
  testing::TempDir dir;
  const std::string tokens = dir.Sub("tokens");
  std::ofstream(tokens) << "# from before hashes\nwrite " << kOldToken << "\n";
  DaemonProcess daemon(dir.Sub("data"), dir.path().string());
  ASSERT_OK(daemon.Start(0, {"--auth-tokens", tokens}));
  client::HttpClient writer("127.0.0.1", daemon.port(), client::ClientOptions{.token = kOldToken});
  EXPECT_OK(Publish(writer, "orders", "t", "1").status());
  ASSERT_OK_AND_ASSIGN(int code, daemon.Terminate());
  EXPECT_EQ(code, 0);
  EXPECT_THAT(daemon.Logs(), HasSubstr("--auth-tokens line 2 holds a token in clear text"));
  EXPECT_THAT(daemon.Logs(), Not(HasSubstr(kOldToken)));
}

TEST(AuthProcessTest, WithoutCredentialsTheDaemonListensOnlyOnLoopbackUnlessTold) {
  const auto refused = RunKeelProcess("daemon --driver memory --listen 192.0.2.1:0");
  EXPECT_EQ(refused.first, cli::kExitUsage) << refused.second;
  EXPECT_THAT(refused.second, HasSubstr("refusing to listen on 192.0.2.1 without authentication"));
  EXPECT_THAT(refused.second, HasSubstr("--insecure-no-auth"));
  // Told, it goes on (and says so) to bind — here an address of no
  // interface of this machine (TEST-NET-1), so it fails there instead.
  const auto told =
      RunKeelProcess("daemon --driver memory --listen 192.0.2.1:0 --insecure-no-auth");
  EXPECT_EQ(told.first, cli::kExitFailure) << told.second;
  EXPECT_THAT(told.second, HasSubstr("no authentication"));
  EXPECT_THAT(told.second, Not(HasSubstr("refusing")));
  // A key without an audience is a usage error too.
  const auto no_audience =
      RunKeelProcess("daemon --driver memory --jwt-hs256-secret-file /dev/null");
  EXPECT_EQ(no_audience.first, cli::kExitUsage) << no_audience.second;
  EXPECT_THAT(no_audience.second, HasSubstr("--jwt-audience is required"));
}

TEST(AuthProcessTest, OnLoopbackWithoutCredentialsTheDaemonSaysSoAtStart) {
  testing::TempDir dir;
  DaemonProcess daemon(dir.Sub("data"), dir.path().string());
  ASSERT_OK(daemon.Start());
  ASSERT_OK_AND_ASSIGN(int code, daemon.Terminate());
  EXPECT_EQ(code, 0);
  EXPECT_THAT(daemon.Logs(), HasSubstr("no authentication"));
}

}  // namespace
}  // namespace keel::daemon_test
