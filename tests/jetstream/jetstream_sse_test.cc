// Two `keel daemon` processes on one jetstream bus, as a deployment runs
// them: a browser-like SSE reader on each sees every event of a stream in
// order, whichever daemon (or other process) published it.
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
#include "keel/tests/jetstream/jetstream_environment.h"
#include "keel/tests/jetstream/jetstream_test_util.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

#ifndef KEEL_BINARY
#define KEEL_BINARY "keel"
#endif

namespace keel::jetstream::testing {
namespace {

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
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    if (out_ != nullptr) fclose(out_);
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
                  "--listen", "127.0.0.1:0", "--port-file", dir + "/port", "--log-level", "warn"}) {
  }

  // Waits for the port file.
  std::string Address() {
    for (int i = 0; i < 300; ++i) {
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

// The sequences of the first `count` events an SSE reader delivers.
std::vector<uint64_t> SseSequences(Child& reader, size_t count) {
  std::vector<uint64_t> sequences;
  std::string line;
  while (sequences.size() < count && reader.ReadLine(line)) {
    if (!absl::StartsWith(line, "data: ")) continue;
    const size_t at = line.find("\"sequence\":");
    if (at == std::string::npos) continue;
    uint64_t sequence = 0;
    const std::string digits = line.substr(at + 11, line.find(',', at) - at - 11);
    if (absl::SimpleAtoi(digits, &sequence)) sequences.push_back(sequence);
  }
  return sequences;
}

TEST(JetStreamSseTest, ReadersOfTwoDaemonsSeeEveryEventInOrder) {
  const std::string bus = FreshBusName();
  ::keel::testing::TempDir dir;
  std::filesystem::create_directories(dir.Sub("a"));
  std::filesystem::create_directories(dir.Sub("b"));
  Daemon a(bus, dir.Sub("a"));
  Daemon b(bus, dir.Sub("b"));
  const std::string on_a = a.Address();
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

  std::vector<uint64_t> expected;
  for (uint64_t i = 1; i <= 30; ++i) expected.push_back(i);
  EXPECT_EQ(SseSequences(*reader_b, 30), expected);
  EXPECT_EQ(SseSequences(*reader_a, 30), expected);
}

}  // namespace
}  // namespace keel::jetstream::testing

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new keel::jetstream::testing::JetStreamEnvironment(1));
  return RUN_ALL_TESTS();
}
