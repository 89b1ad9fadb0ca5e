// The lease race: several threads consume and commit one group at once while
// another thread keeps expiring leases (as crashed or stalled members would
// let them expire), and every third page a consumer stalls until a newer
// lease was granted before it commits (a zombie). Every event must be
// committed by exactly one lease holder, a commit whose token was already
// superseded must be refused, and every event must have been delivered at
// least once.
#include <gmock/gmock.h>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "keel/core/errors.h"
#include "keel/core/mutex.h"
#include "keel/tests/conformance/conformance.h"
#include "keel/tests/conformance/helpers.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel::conformance {

void LinkGroupRaceTests() {}

namespace {

constexpr int kEvents = 300;
constexpr int kConsumers = 4;
constexpr absl::Duration kLease = absl::Seconds(5);

struct Accepted {
  uint64_t from = 0;  // Exclusive.
  uint64_t to = 0;    // Inclusive.
};

// What the consumers saw, shared between them.
struct Ledger {
  Mutex mu;
  std::map<uint64_t, Accepted> accepted ABSL_GUARDED_BY(mu);  // By token.
  std::vector<int> delivered ABSL_GUARDED_BY(mu) = std::vector<int>(kEvents + 1, 0);
  std::vector<std::string> violations ABSL_GUARDED_BY(mu);
  int refused ABSL_GUARDED_BY(mu) = 0;
  std::atomic<uint64_t> newest_grant{0};
  std::atomic<bool> done{false};
};

void NoteGrant(Ledger& ledger, const ConsumePage& page) {
  uint64_t seen = ledger.newest_grant.load();
  while (seen < page.lease.token && !ledger.newest_grant.compare_exchange_weak(seen, page.lease.token)) {
  }
  MutexLock lock(&ledger.mu);
  for (const Event& event : page.events) ++ledger.delivered[event.sequence];
}

void Consumer(ConsumerGroups& groups, Ledger& ledger) {
  ConsumeRequest request{"race", "g", 7, kLease, ConsumeRequest::Start::kEarliest};
  int grants = 0;
  while (!ledger.done.load()) {
    absl::StatusOr<ConsumePage> page = groups.Consume(request);
    if (!page.ok() || page->events.empty()) {
      std::this_thread::yield();
      continue;
    }
    NoteGrant(ledger, *page);
    std::this_thread::yield();  // "Handle" the page.
    if (++grants % 3 == 0) {
      // Stall (bounded) until someone else got a newer lease.
      const absl::Time give_up = absl::Now() + kWait;
      while (ledger.newest_grant.load() <= page->lease.token && absl::Now() < give_up &&
             !ledger.done.load()) {
        std::this_thread::yield();
      }
    }
    // A grant newer than ours that happened before our commit supersedes it.
    const bool superseded = ledger.newest_grant.load() > page->lease.token;
    absl::Status status = groups.Commit("race", "g", page->lease.to, page->lease.token);
    MutexLock lock(&ledger.mu);
    if (status.ok()) {
      if (superseded) {
        ledger.violations.push_back(
            absl::StrCat("token ", page->lease.token, " committed after a newer grant"));
      }
      ledger.accepted[page->lease.token] = {page->lease.from.sequence, page->lease.to.sequence};
    } else if (GetErrorKind(status) == ErrorKind::kConflict) {
      ++ledger.refused;
    } else {
      ledger.violations.push_back(absl::StrCat("commit failed: ", status.ToString()));
    }
  }
}

TEST_P(GroupConformanceTest, LeaseRaceCommitsEveryEventExactlyOnce) {
  ASSERT_OK(PublishN(bus(), "race", kEvents).status());
  Ledger ledger;
  std::vector<std::thread> threads;
  for (int i = 0; i < kConsumers; ++i) {
    threads.emplace_back([&] { Consumer(groups(), ledger); });
  }
  // Expires whatever lease is out, over and over, until all is committed,
  // or until the group made no progress for kLongWait (a stall, not a
  // slow machine: a loaded one only takes longer).
  absl::Time last_progress = absl::Now();
  uint64_t lag = kEvents;
  while (lag > 0 && absl::Now() - last_progress < kLongWait) {
    clock().Advance(kLease);
    absl::SleepFor(absl::Milliseconds(1));
    absl::StatusOr<GroupInfo> info = groups().Describe("race", "g");
    if (info.ok() && info->lag < lag) {
      lag = info->lag;
      last_progress = absl::Now();
    }
  }
  ledger.done.store(true);
  for (std::thread& thread : threads) thread.join();
  ASSERT_EQ(lag, 0u) << "the group stopped getting through the stream";

  MutexLock lock(&ledger.mu);
  EXPECT_THAT(ledger.violations, ::testing::IsEmpty());
  EXPECT_GT(ledger.refused, 0) << "no zombie commit was attempted: the race was not exercised";
  // Accepted commits, in token order, tile 1..kEvents with no overlap.
  uint64_t next = 0;
  for (const auto& [token, range] : ledger.accepted) {
    EXPECT_EQ(range.from, next) << "token " << token << " committed events another also did";
    next = range.to;
  }
  EXPECT_EQ(next, static_cast<uint64_t>(kEvents));
  for (int sequence = 1; sequence <= kEvents; ++sequence) {
    EXPECT_GE(ledger.delivered[sequence], 1) << "event " << sequence << " never delivered";
  }
}

}  // namespace
}  // namespace keel::conformance
