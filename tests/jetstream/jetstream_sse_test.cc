// `keel daemon` processes on one jetstream bus of a three-node cluster, as a
// deployment runs them: a browser-like SSE reader on each sees every event
// of a stream in order, whichever daemon (or other process) published it,
// and a reader whose daemon dies resumes on another with Last-Event-ID.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "keel/tests/conformance/helpers.h"
#include "keel/tests/jetstream/jetstream_environment.h"
#include "keel/tests/jetstream/jetstream_test_util.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

#ifndef KEEL_BINARY
#define KEEL_BINARY "keel"
#endif

namespace keel::jetstream::testing {
namespace {

using ::keel::conformance::Range;

// A child process whose standard output the test reads.
class Child {
 public:
  explicit Child(std::vector<std::string> args) {
    int out[2];
    if (pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      close(out[1]);
      std::vector<char*> argv;
      for (std::string& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      execvp(argv[0], argv.data());
      _exit(127);
    }
    close(out[1]);
    out_ = fdopen(out[0], "r");
  }
  ~Child() {
    Stop(SIGTERM);
    if (out_ != nullptr) fclose(out_);
  }
  // Sends `signal` and waits for the process to end.
  void Stop(int signal) {
    if (pid_ <= 0) return;
    kill(pid_, signal);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  // The next line of output (without its newline); false at its end.
  bool ReadLine(std::string& line) {
    line.clear();
    if (out_ == nullptr) return false;
    int c;
    while ((c = fgetc(out_)) != EOF && c != '\n') line.push_back(static_cast<char>(c));
    return c != EOF || !line.empty();
  }

 private:
  pid_t pid_ = -1;
  FILE* out_ = nullptr;
};

// `keel daemon` on a free port of the bus; its address once it listens.
class Daemon {
 public:
  Daemon(const std::string& bus, const std::string& dir)
      : port_file_(dir + "/port"),
        process_({KEEL_BINARY, "daemon", "--driver", "jetstream", "--driver-option",
                  "servers=" + SharedCluster()->servers(), "--driver-option", "bus=" + bus,
                  "--driver-option", "replicas=3", "--listen", "127.0.0.1:0", "--port-file",
                  dir + "/port", "--log-level", "warn"}) {}

  // SIGKILL: the daemon ends without closing its connections.
  void Kill() { process_.Stop(SIGKILL); }

  // Waits for the port file.
  std::string Address() {
    for (int i = 0; i < 600; ++i) {
      std::ifstream file(port_file_);
      int port = 0;
      if (file >> port && port > 0) return absl::StrCat("127.0.0.1:", port);
      absl::SleepFor(absl::Milliseconds(100));
    }
    return "";
  }

 private:
  std::string port_file_;
  Child process_;
};

struct SseEvent {
  uint64_t sequence = 0;
  std::string id;  // The frame's id: the event's cursor.
};

// The first `count` events an SSE reader delivers, with their ids.
std::vector<SseEvent> SseEvents(Child& reader, size_t count) {
  std::vector<SseEvent> events;
  std::string line;
  std::string id;
  while (events.size() < count && reader.ReadLine(line)) {
    if (absl::StartsWith(line, "id: ")) id = line.substr(4);
    const size_t at = line.find("\"sequence\":");
    if (!absl::StartsWith(line, "data: ") || at == std::string::npos) continue;
    uint64_t sequence = 0;
    const std::string digits = line.substr(at + 11, line.find(',', at) - at - 11);
    if (absl::SimpleAtoi(digits, &sequence)) events.push_back({sequence, id});
  }
  return events;
}

// An SSE reader of `stream` on `address`, from the start or after the
// event `last_event_id` names.
std::unique_ptr<Child> SseReader(const std::string& address, const std::string& last_event_id) {
  std::vector<std::string> args = {"curl", "-sN", "--max-time",
                                   "120",  "-H",  "Accept: text/event-stream"};
  if (!last_event_id.empty()) {
    args.push_back("-H");
    args.push_back("Last-Event-ID: " + last_event_id);
  }
  args.push_back(absl::StrCat("http://", address, "/v1/streams/orders/sse",
                              last_event_id.empty() ? "?after=earliest" : ""));
  return std::make_unique<Child>(std::move(args));
}

// Publishes one event over HTTP; the daemon's answer (its receipt).
std::string PublishOver(const std::string& address) {
  Child publish({"curl", "-s", "--max-time", "90", "-X", "POST", "-H",
                 "content-type: application/json", "-d", R"({"type":"order.created","data":{}})",
                 absl::StrCat("http://", address, "/v1/streams/orders/events")});
  std::string answer;
  publish.ReadLine(answer);
  return answer;
}

std::vector<uint64_t> Sequences(const std::vector<SseEvent>& events) {
  std::vector<uint64_t> out;
  for (const SseEvent& event : events) out.push_back(event.sequence);
  return out;
}

// A reader follows through daemon b; b is killed, then the stream's leader
// too, while daemon a keeps publishing; the reader reconnects to daemon c
// with the id of the last event it got and receives exactly the rest.
TEST(JetStreamSseTest, AReaderResumesOnAThirdDaemonAfterItsDaemonAndTheLeaderDie) {
  NatsCluster& cluster = *SharedCluster();
  const std::string bus = FreshBusName();
  ::keel::testing::TempDir dir;
  for (const char* name : {"a", "b", "c"}) std::filesystem::create_directories(dir.Sub(name));
  Daemon a(bus, dir.Sub("a"));
  const std::string on_a = a.Address();  // The first creates the JetStream stream.
  Daemon b(bus, dir.Sub("b"));
  Daemon c(bus, dir.Sub("c"));
  const std::string on_b = b.Address();
  const std::string on_c = c.Address();
  ASSERT_FALSE(on_a.empty() || on_b.empty() || on_c.empty());

  std::unique_ptr<Child> first = SseReader(on_b, "");
  for (int i = 0; i < 10; ++i) ASSERT_THAT(PublishOver(on_a), ::testing::HasSubstr("\"sequence\""));
  const std::vector<SseEvent> before = SseEvents(*first, 10);
  ASSERT_EQ(Sequences(before), Range(1, 10));

  b.Kill();
  ASSERT_OK_AND_ASSIGN(int leader, cluster.LeaderOf(absl::StrCat("KEEL_", bus)));
  cluster.Kill(leader);
  // Acknowledged while the leader is gone (after the election stall).
  for (int i = 0; i < 10; ++i) ASSERT_THAT(PublishOver(on_a), ::testing::HasSubstr("\"sequence\""));
  ASSERT_OK(cluster.Restart(leader));
  ASSERT_OK(cluster.WaitReady());
  for (int i = 0; i < 10; ++i) ASSERT_THAT(PublishOver(on_c), ::testing::HasSubstr("\"sequence\""));

  std::unique_ptr<Child> resumed = SseReader(on_c, before.back().id);
  EXPECT_EQ(Sequences(SseEvents(*resumed, 20)), Range(11, 30));
}

TEST(JetStreamSseTest, ReadersOfTwoDaemonsSeeEveryEventInOrder) {
  const std::string bus = FreshBusName();
  ::keel::testing::TempDir dir;
  std::filesystem::create_directories(dir.Sub("a"));
  std::filesystem::create_directories(dir.Sub("b"));
  Daemon a(bus, dir.Sub("a"));
  const std::string on_a = a.Address();  // The first creates the JetStream stream.
  Daemon b(bus, dir.Sub("b"));
  const std::string on_b = b.Address();
  ASSERT_FALSE(on_a.empty());
  ASSERT_FALSE(on_b.empty());
  auto sse = [](const std::string& address) {
    return std::make_unique<Child>(std::vector<std::string>{
        "curl", "-sN", "--max-time", "60", "-H", "Accept: text/event-stream",
        absl::StrCat("http://", address, "/v1/streams/orders/sse?after=earliest")});
  };
  std::unique_ptr<Child> reader_a = sse(on_a);
  std::unique_ptr<Child> reader_b = sse(on_b);

  // Ten events through each daemon's HTTP API and ten from another process
  // on the bus, interleaved.
  ASSERT_OK_AND_ASSIGN(auto other, OpenDaemon([&] {
                         Config config;
                         config.Set("bus", bus);
                         return config;
                       }()));
  for (int round = 0; round < 10; ++round) {
    for (const std::string& address : {on_a, on_b}) {
      Child publish({"curl", "-s", "-X", "POST", "-H", "content-type: application/json", "-d",
                     R"({"type":"order.created","data":{}})",
                     absl::StrCat("http://", address, "/v1/streams/orders/events")});
      std::string answer;
      publish.ReadLine(answer);
      ASSERT_THAT(answer, ::testing::HasSubstr("\"sequence\"")) << answer;
    }
    ASSERT_OK(other->Publish(Payload("orders", "from elsewhere")).status());
  }

  EXPECT_EQ(Sequences(SseEvents(*reader_b, 30)), Range(1, 30));
  EXPECT_EQ(Sequences(SseEvents(*reader_a, 30)), Range(1, 30));
}

}  // namespace
}  // namespace keel::jetstream::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new keel::jetstream::testing::JetStreamEnvironment(3));
  return RUN_ALL_TESTS();
}
