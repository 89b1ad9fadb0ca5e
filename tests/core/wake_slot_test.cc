// WakeSlot: a waiter that went to sleep is woken by the Wake that follows
// its condition, and a Wake with nobody asleep leaves the next Wait to find
// the condition already true.
#include "keel/core/wake_slot.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace keel {
namespace {

TEST(WakeSlotTest, ASleepingWaiterIsWokenOnceTheConditionHolds) {
  WakeSlot slot;
  std::atomic<bool> ready{false};
  std::atomic<int> checks{0};
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    slot.Wait([&] {
      checks.fetch_add(1);
      return ready.load(std::memory_order_seq_cst);
    });
    returned = true;
  });
  // The waiter has checked and found nothing: it sleeps now, or soon.
  while (checks.load() == 0) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(returned.load());
  ready.store(true, std::memory_order_seq_cst);
  slot.Wake();
  waiter.join();  // Hangs (and the test times out) if the wake-up is lost.
  EXPECT_TRUE(returned.load());
}

TEST(WakeSlotTest, AWakeBeforeTheWaitIsNotNeeded) {
  WakeSlot slot;
  std::atomic<bool> ready{true};
  slot.Wake();  // Nobody sleeps: no system call, nothing kept.
  slot.Wait([&] { return ready.load(std::memory_order_seq_cst); });
  SUCCEED();
}

// Many handoffs between two threads, each one sleeping or spinning at
// random points: none is lost.
TEST(WakeSlotTest, HandoffsBetweenTwoThreadsAreNeverLost) {
  WakeSlot to_b, to_a;
  std::atomic<int> turn{0};  // Even: a's turn; odd: b's.
  constexpr int kRounds = 2000;
  std::thread b([&] {
    for (int i = 0; i < kRounds; ++i) {
      to_b.Wait([&] { return turn.load(std::memory_order_seq_cst) == 2 * i + 1; });
      turn.store(2 * i + 2, std::memory_order_seq_cst);
      to_a.Wake();
    }
  });
  for (int i = 0; i < kRounds; ++i) {
    to_a.Wait([&] { return turn.load(std::memory_order_seq_cst) == 2 * i; });
    turn.store(2 * i + 1, std::memory_order_seq_cst);
    to_b.Wake();
  }
  b.join();
  EXPECT_EQ(turn.load(), 2 * kRounds);
}

}  // namespace
}  // namespace keel
