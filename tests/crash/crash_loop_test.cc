// The crash loop (issue #27, "Crash safety"): `keel daemon` is killed with
// SIGKILL at random moments while publishers, SSE followers and a consumer
// group work against it, and started again on the same data directory each
// time. Then, from a replay of every stream: every acknowledged event is
// stored exactly once, at the sequence its receipt gave, and the sequences
// are 1..N without a gap; each SSE follower received exactly those events,
// in order; the group handled each at least once and its committed position
// never went back. With --sync always (an acknowledged event is fsynced)
// and --sync none (a killed process loses nothing: its writes are in the
// kernel's page cache).
//
// Run on demand with more kills: crash_loop_test --loops 50 [--seed S]
// (crash_loop_options.h).
#include <gtest/gtest.h>

#include <atomic>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/crash/crash_loop_options.h"
#include "keel/tests/crash/crashing_daemon.h"
#include "keel/tests/crash/event_identity.h"
#include "keel/tests/crash/failures.h"
#include "keel/tests/crash/final_heads.h"
#include "keel/tests/crash/group_consumer.h"
#include "keel/tests/crash/ledger_checks.h"
#include "keel/tests/crash/publisher.h"
#include "keel/tests/crash/sse_follower.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel::crash_test {
namespace {

constexpr int kStreams = 3;
constexpr int kPublishers = 4;
constexpr char kGroup[] = "crash-group";
// A kill comes this long after the daemon is up (again): from its very
// first requests (SSE resumes, retried publishes and commits arriving
// together) to well into steady traffic.
constexpr absl::Duration kMinUptime = absl::ZeroDuration();
constexpr absl::Duration kMaxUptime = absl::Milliseconds(1500);

std::vector<std::string> StreamNames() {
  std::vector<std::string> streams;
  for (int i = 0; i < kStreams; ++i) streams.push_back(absl::StrCat("crash.s", i));
  return streams;
}

// An idempotency key must outlive the test, so that a retry after any
// number of restarts still finds the original (the default window is 2m).
std::vector<std::string> DaemonFlags(const std::string& sync,
                                     const std::vector<std::string>& streams) {
  std::vector<std::string> flags = {"--sync", sync};
  for (const std::string& stream : streams) {
    flags.insert(flags.end(), {"--declare", absl::StrCat(stream, " dedupe_window=1h")});
  }
  return flags;
}

std::string LastLines(const std::string& text, int lines) {
  size_t at = text.size();
  for (int i = 0; i <= lines && at != std::string::npos && at > 0; ++i) {
    at = text.rfind('\n', at - 1);
  }
  return at == std::string::npos ? text : text.substr(at + 1);
}

class CrashLoopTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CrashLoopTest, KeepsEveryAcknowledgedEventAcrossKills) {
  const CrashLoopOptions& options = RunOptions();
  const std::string sync = GetParam();
  std::cout << "crash loop: sync=" << sync << ", " << options.loops << " kills under load, seed "
            << options.seed << " (--seed " << options.seed << " repeats its choices)" << std::endl;
  const std::vector<std::string> streams = StreamNames();
  testing::TempDir dir;
  CrashingDaemon daemon(dir.Sub("data"), dir.path().string(), DaemonFlags(sync, streams));
  ASSERT_TRUE(daemon.Start().ok()) << daemon.Logs();

  std::mt19937_64 rng(options.seed);
  Failures failures;
  FinalHeads heads;
  std::atomic<bool> stop_publishing{false};
  std::atomic<bool> abandon{false};  // A fatal failure: every thread ends.
  std::vector<std::unique_ptr<Publisher>> publishers;
  for (int i = 0; i < kPublishers; ++i) {
    publishers.push_back(
        std::make_unique<Publisher>(i, streams, daemon.endpoint(), failures, rng()));
  }
  std::vector<std::unique_ptr<SseFollower>> followers;
  for (const std::string& stream : streams) {
    followers.push_back(std::make_unique<SseFollower>(stream, daemon.endpoint(), failures, heads));
  }
  GroupConsumer consumer(streams, kGroup, daemon.endpoint(), failures, heads, rng());

  std::vector<std::thread> publishing;
  for (auto& publisher : publishers) {
    publishing.emplace_back([&publisher, &stop_publishing] { publisher->Run(stop_publishing); });
  }
  std::vector<std::thread> reading;
  for (auto& follower : followers) {
    reading.emplace_back([&follower, &abandon] { follower->Run(abandon); });
  }
  reading.emplace_back([&consumer, &abandon] { consumer.Run(abandon); });

  std::uniform_int_distribution<int64_t> uptime_ms(absl::ToInt64Milliseconds(kMinUptime),
                                                   absl::ToInt64Milliseconds(kMaxUptime));
  const absl::Time started = absl::Now();
  for (int loop = 0; loop < options.loops && !abandon.load(); ++loop) {
    absl::SleepFor(absl::Milliseconds(uptime_ms(rng)));
    if (absl::Status restarted = daemon.KillAndRestart(); !restarted.ok()) {
      failures.Add("daemon", absl::StrCat("kill ", loop + 1, ": ", restarted.ToString()));
      abandon = true;
    }
  }
  stop_publishing = true;
  for (std::thread& thread : publishing) thread.join();
  // Once more with no publish in flight: the events acknowledged after the
  // last kill under load must survive a kill too.
  if (!abandon.load()) {
    if (absl::Status restarted = daemon.KillAndRestart(); !restarted.ok()) {
      failures.Add("daemon", absl::StrCat("the last kill: ", restarted.ToString()));
      abandon = true;
    }
  }
  absl::StatusOr<std::vector<StreamReplay>> replays =
      abandon.load() ? absl::AbortedError("abandoned") : ReplayStreams(daemon.endpoint(), streams);
  if (replays.ok()) {
    std::map<std::string, uint64_t> last;
    for (const StreamReplay& replay : *replays) last[replay.stream] = replay.events.size();
    heads.Set(std::move(last));
  } else {
    failures.Add("daemon", absl::StrCat("the final replay: ", replays.status().ToString()));
    abandon = true;
  }
  for (std::thread& thread : reading) thread.join();
  const absl::Duration took = absl::Now() - started;

  PublisherCounts published;
  std::vector<Receipt> receipts;
  for (const auto& publisher : publishers) {
    published += publisher->counts();
    receipts.insert(receipts.end(), publisher->receipts().begin(), publisher->receipts().end());
  }
  uint64_t replayed = 0;
  std::vector<std::string> per_stream;
  if (replays.ok()) {
    CheckStored(*replays, receipts, failures);
    for (size_t i = 0; i < replays->size(); ++i) {
      const StreamReplay& replay = (*replays)[i];
      replayed += replay.events.size();
      per_stream.push_back(absl::StrCat(replay.stream, " ", replay.events.size()));
      CheckFollowed(followers[i]->events(), replay, failures);
      CheckHandled(kGroup, consumer.streams().at(replay.stream), replay, failures);
    }
  }
  uint64_t followed = 0;
  int connections = 0;
  for (const auto& follower : followers) {
    followed += follower->events().size();
    connections += follower->connections();
  }
  const GroupCounts& group = consumer.counts();
  std::cout << "crash loop: sync=" << sync << ", " << daemon.kills() << " kills (" << options.loops
            << " under load, 1 after the publishers stopped), " << daemon.moves()
            << " restarts on a new port, "
            << absl::FormatDuration(absl::Trunc(took, absl::Milliseconds(100))) << "\n"
            << "  published: " << published.acknowledged << " events acknowledged in "
            << published.requests << " requests; " << published.unknown_outcomes
            << " requests unanswered (cut by a kill, or refused while the daemon was down), "
            << published.retried << " events retried, " << published.duplicates
            << " of them already stored (duplicate receipts)\n"
            << "  replayed:  " << replayed << " events (" << absl::StrJoin(per_stream, ", ")
            << ")\n"
            << "  followed:  " << followed << " events over SSE, " << connections
            << " connections (resumed with Last-Event-ID)\n"
            << "  handled:   " << group.handled << " events by group " << kGroup << " in "
            << group.pages << " pages, " << group.commits << " commits, " << group.unknown_outcomes
            << " requests unanswered, " << group.busy
            << " waits for the lease of a lost answer, committed positions read after "
            << group.restarts_seen << " restarts\n"
            << "  failures:  " << failures.count() << std::endl;

  absl::StatusOr<int> exit_code = daemon.Stop();
  EXPECT_TRUE(exit_code.ok() && *exit_code == 0) << "a graceful stop after the loop failed\n"
                                                 << daemon.Logs();
  EXPECT_TRUE(failures.empty()) << "seed " << options.seed << ", sync=" << sync << ":\n"
                                << failures.Describe() << "the daemon's log, last lines:\n"
                                << LastLines(daemon.Logs(), 40);
}

INSTANTIATE_TEST_SUITE_P(Sync, CrashLoopTest, ::testing::Values("always", "none"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return info.param;
                         });

}  // namespace
}  // namespace keel::crash_test

int main(int argc, char** argv) {
  return keel::crash_test::RunTestsWithOptions("crash_loop_test", argc, argv);
}
