// The group committer coalesces publishes that queue up while a commit is in
// flight into one commit, and hands each member its group's status.
#include "drivers/durable/group_commit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "core/mutex.h"

namespace keel::durable {
namespace {

TEST(GroupCommitTest, AppendsQueuedDuringACommitShareTheNextCommit) {
  Notification first_started, release_first;
  Mutex mu;
  std::vector<size_t> group_sizes;
  GroupCommitter committer(1 << 20, [&](absl::Span<PendingAppend* const> group) {
    {
      MutexLock lock(&mu);
      group_sizes.push_back(group.size());
    }
    if (!first_started.HasBeenNotified()) {
      first_started.Notify();
      release_first.WaitForNotification();
    }
    return absl::OkStatus();
  });

  constexpr int kFollowers = 10;
  std::vector<PendingAppend> appends(kFollowers + 1);
  std::vector<std::thread> threads;
  threads.emplace_back([&] { EXPECT_TRUE(committer.Submit(appends[0]).ok()); });
  first_started.WaitForNotification();
  for (int i = 1; i <= kFollowers; ++i) {
    threads.emplace_back([&, i] { EXPECT_TRUE(committer.Submit(appends[i]).ok()); });
  }
  while (committer.queued() < kFollowers + 1) absl::SleepFor(absl::Milliseconds(1));
  release_first.Notify();
  for (auto& thread : threads) thread.join();

  EXPECT_THAT(group_sizes, ::testing::ElementsAre(1, kFollowers));
}

TEST(GroupCommitTest, EveryMemberGetsTheGroupError) {
  GroupCommitter committer(1 << 20, [](absl::Span<PendingAppend* const>) {
    return absl::UnavailableError("disk gone");
  });
  PendingAppend append;
  EXPECT_EQ(committer.Submit(append).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(committer.queued(), 0u);
}

TEST(GroupCommitTest, ByteBudgetSplitsGroups) {
  Notification first_started, release_first;
  std::vector<size_t> group_sizes;
  Mutex mu;
  GroupCommitter committer(100, [&](absl::Span<PendingAppend* const> group) {
    {
      MutexLock lock(&mu);
      group_sizes.push_back(group.size());
    }
    if (!first_started.HasBeenNotified()) {
      first_started.Notify();
      release_first.WaitForNotification();
    }
    return absl::OkStatus();
  });
  std::vector<PendingAppend> appends(5);
  for (auto& append : appends) append.bytes = 40;  // Two fit in 100 bytes.
  std::vector<std::thread> threads;
  threads.emplace_back([&] { EXPECT_TRUE(committer.Submit(appends[0]).ok()); });
  first_started.WaitForNotification();
  for (int i = 1; i < 5; ++i) {
    threads.emplace_back([&, i] { EXPECT_TRUE(committer.Submit(appends[i]).ok()); });
  }
  while (committer.queued() < 5) absl::SleepFor(absl::Milliseconds(1));
  release_first.Notify();
  for (auto& thread : threads) thread.join();
  EXPECT_THAT(group_sizes, ::testing::ElementsAre(1, 2, 2));
}

}  // namespace
}  // namespace keel::durable
