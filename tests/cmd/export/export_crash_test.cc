// `keel daemon --export` SIGKILLed at random points of its export, ten
// times, then let finish: the files and their bytes are what one clean pass
// (`keel export`, over HTTP) writes, and DuckDB counts every event once.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/cmd/export/duckdb_query.h"
#include "keel/tests/cmd/run_keel.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel::lakehouse {
namespace {

using daemon_test::DaemonProcess;

constexpr int kEventsPerStream = 1000;
constexpr int kFileEvents = 10;
// Under one prefix: the daemon's own streams (keel.runtime, which records
// each unclean start) are not this test's.
const std::vector<std::string> kStreams = {"lake.orders.eu", "lake.orders.us", "lake.payments"};
constexpr size_t kFiles = 3 * ((kEventsPerStream + kFileEvents - 1) / kFileEvents);

// Every event file under `root` (not the temporary files a put leaves
// while it writes), with its bytes.
std::map<std::string, std::string> EventFiles(const std::string& root) {
  std::map<std::string, std::string> files;
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(root, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    const std::string leaf = it->path().filename().string();
    if (!it->is_regular_file(error) || !absl::EndsWith(leaf, ".jsonl")) continue;
    std::ifstream in(it->path(), std::ios::binary);
    files[std::filesystem::relative(it->path(), root).string()] =
        std::string(std::istreambuf_iterator<char>(in), {});
  }
  return files;
}

// How many event files EventFiles would return; cheap enough to poll.
size_t CountEventFiles(const std::string& root) {
  size_t count = 0;
  std::error_code error;
  for (auto it = std::filesystem::recursive_directory_iterator(root, error);
       !error && it != std::filesystem::recursive_directory_iterator(); it.increment(error)) {
    count += absl::EndsWith(it->path().filename().string(), ".jsonl");
  }
  return count;
}

std::string Batch(int first, int count) {
  std::string body = "[";
  for (int i = 0; i < count; ++i) {
    absl::StrAppend(&body, i ? "," : "", R"({"type":"order.created","data":{"n":)", first + i,
                    R"(,"note":")", std::string(200, 'x'), R"("}})");
  }
  return body + "]";
}

// The export's checkpoint on `stream`: 0 before its first file.
uint64_t Exported(client::HttpClient& http, const std::string& stream, const std::string& group) {
  absl::StatusOr<client::ClientResponse> response =
      http.Get(client::BuildTarget({"v1", "streams", stream, "groups", group}));
  if (!response.ok() || response->status != 200) return 0;
  return boost::json::parse(response->body).at("committedSequence").to_number<uint64_t>();
}

TEST(ExportCrashTest, KilledAtRandomPointsItWritesWhatOneCleanPassWrites) {
  testing::TempDir dir;
  const std::string lake = dir.Sub("lake");
  const std::string clean = dir.Sub("clean");
  std::filesystem::create_directories(dir.Sub("logs"));
  DaemonProcess daemon(dir.Sub("data"), dir.Sub("logs"));
  ASSERT_OK(daemon.Start());
  {
    client::HttpClient http("127.0.0.1", daemon.port());
    for (const std::string& stream : kStreams) {
      for (int first = 0; first < kEventsPerStream; first += 100) {
        ASSERT_OK_AND_ASSIGN(client::ClientResponse response,
                             daemon_test::PostEvents(http, stream, Batch(first, 100)));
        ASSERT_EQ(response.status, 201) << response.body;
      }
    }
  }
  ASSERT_OK_AND_ASSIGN(int stopped, daemon.Terminate());
  ASSERT_EQ(stopped, 0);

  const std::vector<std::string> exporting = {"--export",
                                              absl::StrCat("lake.* ", lake, " name=lake"),
                                              "--export-interval",
                                              "10ms",
                                              "--export-flush-after",
                                              "0s",
                                              "--export-file-events",
                                              absl::StrCat(kFileEvents)};
  const unsigned seed = std::random_device()();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937 random(seed);
  for (int kill = 0; kill < 10; ++kill) {
    const size_t linked = CountEventFiles(lake);
    // Somewhere in the next tenth of the files; each kill lands inside the
    // export, at a point between two writes the poll happened to see.
    const size_t at = std::min(
        kFiles - 1, linked + std::uniform_int_distribution<size_t>(1, kFiles / 10)(random));
    ASSERT_OK(daemon.Start(0, exporting));
    const absl::Time deadline = absl::Now() + daemon_test::kWait;
    while (CountEventFiles(lake) < at && absl::Now() < deadline) {
      absl::SleepFor(absl::Microseconds(50));
    }
    ASSERT_OK(daemon.Terminate(SIGKILL).status());
  }

  ASSERT_OK(daemon.Start(0, exporting));
  client::HttpClient http("127.0.0.1", daemon.port());
  const absl::Time deadline = absl::Now() + daemon_test::kWait;
  for (const std::string& stream : kStreams) {
    while (Exported(http, stream, "export.lake") < kEventsPerStream && absl::Now() < deadline) {
      absl::SleepFor(absl::Milliseconds(10));
    }
    ASSERT_EQ(Exported(http, stream, "export.lake"), static_cast<uint64_t>(kEventsPerStream));
  }
  const testing::KeelRun pass = testing::RunKeel(
      {"export", "--server", absl::StrCat("127.0.0.1:", daemon.port()), "--stream", "lake.*",
       "--out", clean, "--name", "clean", "--max-file-events", absl::StrCat(kFileEvents)});
  ASSERT_EQ(pass.code, 0) << pass.err;
  EXPECT_THAT(pass.out, ::testing::HasSubstr(absl::StrCat(3 * kEventsPerStream, " events in ",
                                                          kFiles, " new files")));
  ASSERT_OK(daemon.Terminate().status());

  const std::map<std::string, std::string> exported = EventFiles(lake);
  EXPECT_EQ(exported.size(), kFiles);
  EXPECT_TRUE(exported == EventFiles(clean))
      << "the killed export's files differ from a clean pass's";
  ASSERT_OK_AND_ASSIGN(int64_t counted,
                       testing::DuckDbCount(absl::StrCat(
                           "SELECT count(*) AS n, count(DISTINCT (stream, sequence)) AS d FROM "
                           "read_json_auto('",
                           lake, "/**/*.jsonl')")));
  EXPECT_EQ(counted, 3 * kEventsPerStream);
}

}  // namespace
}  // namespace keel::lakehouse
