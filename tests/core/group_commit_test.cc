// The group committer coalesces publishes that queue up while a commit is in
// flight into one commit, and hands each member its group's status, whether
// a thread waits for it (Submit) or not (SubmitAsync).
#include "keel/core/group_commit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <deque>
#include <memory>
#include <stdexcept>
#include <thread>

#include "keel/core/mutex.h"

namespace keel {
namespace {

// A commit function that records each group's size and holds the first
// commit until `release` (so that others queue behind it); the commits after
// it return `later`.
struct HeldFirstCommit {
  GroupCommitter::CommitFn Fn() {
    return [this](absl::Span<QueuedCommit* const> group) {
      {
        MutexLock lock(&mu);
        sizes.push_back(group.size());
      }
      if (started.HasBeenNotified()) return later;
      started.Notify();
      release.WaitForNotification();
      return absl::OkStatus();
    };
  }
  std::vector<size_t> Sizes() {
    MutexLock lock(&mu);
    return sizes;
  }

  Notification started, release;
  absl::Status later;
  Mutex mu;
  std::vector<size_t> sizes;
};

TEST(GroupCommitTest, AppendsQueuedDuringACommitShareTheNextCommit) {
  HeldFirstCommit commits;
  GroupCommitter committer(1 << 20, commits.Fn());

  constexpr int kFollowers = 10;
  std::vector<QueuedCommit> appends(kFollowers + 1);
  std::vector<std::thread> threads;
  threads.emplace_back([&] { EXPECT_TRUE(committer.Submit(appends[0]).ok()); });
  commits.started.WaitForNotification();
  for (int i = 1; i <= kFollowers; ++i) {
    threads.emplace_back([&, i] { EXPECT_TRUE(committer.Submit(appends[i]).ok()); });
  }
  while (committer.queued() < kFollowers + 1) absl::SleepFor(absl::Milliseconds(1));
  commits.release.Notify();
  for (auto& thread : threads) thread.join();

  EXPECT_THAT(commits.Sizes(), ::testing::ElementsAre(1, kFollowers));
}

TEST(GroupCommitTest, EveryMemberGetsTheGroupError) {
  GroupCommitter committer(1 << 20, [](absl::Span<QueuedCommit* const>) {
    return absl::UnavailableError("disk gone");
  });
  QueuedCommit append;
  EXPECT_EQ(committer.Submit(append).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(committer.queued(), 0u);
}

TEST(GroupCommitTest, ByteBudgetSplitsGroups) {
  HeldFirstCommit commits;
  GroupCommitter committer(100, commits.Fn());
  std::vector<QueuedCommit> appends(5);
  for (auto& append : appends) append.bytes = 40;  // Two fit in 100 bytes.
  std::vector<std::thread> threads;
  threads.emplace_back([&] { EXPECT_TRUE(committer.Submit(appends[0]).ok()); });
  commits.started.WaitForNotification();
  for (int i = 1; i < 5; ++i) {
    threads.emplace_back([&, i] { EXPECT_TRUE(committer.Submit(appends[i]).ok()); });
  }
  while (committer.queued() < 5) absl::SleepFor(absl::Milliseconds(1));
  commits.release.Notify();
  for (auto& thread : threads) thread.join();
  EXPECT_THAT(commits.Sizes(), ::testing::ElementsAre(1, 2, 2));
}

// An asynchronous append and what its `done` was told.
struct AsyncAppend {
  QueuedCommit append;
  Notification answered;
  absl::Status status;

  void Submit(GroupCommitter& committer) {
    append.done = [this](absl::Status result) {
      status = std::move(result);
      answered.Notify();
    };
    committer.SubmitAsync(append);
  }
};

// An AsyncAppend must outlive the committer's Notify(), hence the
// committer's own life: the tests declare them before the committer.

TEST(GroupCommitTest, AsyncAppendsAreCommittedInOrderAndAnswered) {
  std::vector<AsyncAppend> appends(20);
  Mutex mu;
  std::vector<QueuedCommit*> committed;
  GroupCommitter committer(1 << 20, [&](absl::Span<QueuedCommit* const> group) {
    MutexLock lock(&mu);
    committed.insert(committed.end(), group.begin(), group.end());
    return absl::OkStatus();
  });
  for (AsyncAppend& append : appends) append.Submit(committer);
  for (AsyncAppend& append : appends) {
    ASSERT_TRUE(append.answered.WaitForNotificationWithTimeout(absl::Seconds(60)));
    EXPECT_TRUE(append.status.ok()) << append.status;
  }
  MutexLock lock(&mu);
  ASSERT_EQ(committed.size(), appends.size());
  for (size_t i = 0; i < appends.size(); ++i) EXPECT_EQ(committed[i], &appends[i].append);
}

TEST(GroupCommitTest, WaitingAndAsyncMembersShareAGroupAndItsError) {
  AsyncAppend before, after;
  HeldFirstCommit commits;
  commits.later = absl::UnavailableError("disk gone");
  GroupCommitter committer(1 << 20, commits.Fn());
  QueuedCommit first, waiting;
  std::thread leader([&] { EXPECT_TRUE(committer.Submit(first).ok()); });
  commits.started.WaitForNotification();
  before.Submit(committer);
  absl::Status waited;
  std::thread follower([&] { waited = committer.Submit(waiting); });
  while (committer.queued() < 3) absl::SleepFor(absl::Milliseconds(1));
  after.Submit(committer);
  commits.release.Notify();
  leader.join();
  follower.join();
  ASSERT_TRUE(before.answered.WaitForNotificationWithTimeout(absl::Seconds(60)));
  ASSERT_TRUE(after.answered.WaitForNotificationWithTimeout(absl::Seconds(60)));

  EXPECT_EQ(waited.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(before.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(after.status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(commits.Sizes(), ::testing::ElementsAre(1, 3));
}

// Many threads, waiting and not: every append is committed exactly once and
// commits never overlap (the commit function is the store's single writer).
TEST(GroupCommitTest, MixedSubmittersNeverCommitConcurrently) {
  constexpr int kThreads = 8;
  constexpr int kPerThread = 200;
  std::vector<std::deque<AsyncAppend>> answered_later(kThreads);
  std::atomic<bool> in_commit{false};
  std::atomic<int> overlaps{0};
  std::atomic<size_t> committed{0};
  GroupCommitter committer(1 << 20, [&](absl::Span<QueuedCommit* const> group) {
    if (in_commit.exchange(true)) overlaps.fetch_add(1);
    // Some commits are slow, like a disk's, so that the committer thread
    // takes over; the others are fast and hand back to waiting members.
    if (committed.load() % 7 == 0) absl::SleepFor(absl::Microseconds(200));
    committed.fetch_add(group.size());
    in_commit.store(false);
    return absl::OkStatus();
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        if ((t + i) % 2 == 0) {
          QueuedCommit append;
          EXPECT_TRUE(committer.Submit(append).ok());
        } else {
          AsyncAppend& append = answered_later[t].emplace_back();
          append.Submit(committer);
          EXPECT_TRUE(append.answered.WaitForNotificationWithTimeout(absl::Seconds(60)));
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(overlaps.load(), 0);
  EXPECT_EQ(committed.load(), static_cast<size_t>(kThreads * kPerThread));
}

TEST(GroupCommitTest, AnExceptionFromTheCommitIsTheGroupsStatus) {
  AsyncAppend async;
  GroupCommitter committer(1 << 20, [](absl::Span<QueuedCommit* const>) -> absl::Status {
    throw std::runtime_error("out of memory, say");
  });
  QueuedCommit waiting;
  EXPECT_EQ(committer.Submit(waiting).code(), absl::StatusCode::kInternal);
  async.Submit(committer);
  ASSERT_TRUE(async.answered.WaitForNotificationWithTimeout(absl::Seconds(60)));
  EXPECT_EQ(async.status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(committer.queued(), 0u);
}

}  // namespace
}  // namespace keel
