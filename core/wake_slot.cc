#include "keel/core/wake_slot.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <climits>

namespace keel {
namespace {

// std::atomic<uint32_t> is a plain 32-bit word: the futex word itself.
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

long Futex(std::atomic<uint32_t>& word, int op, uint32_t value) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), op, value, nullptr, nullptr, 0);
}

}  // namespace

void WakeSlot::Sleep(uint32_t seen) {
  // Returns at once (EAGAIN) when the generation moved on; EINTR and
  // spurious returns are re-checked by Wait's loop.
  Futex(generation_, FUTEX_WAIT_PRIVATE, seen);
}

void WakeSlot::WakeSleepers() { Futex(generation_, FUTEX_WAKE_PRIVATE, INT_MAX); }

}  // namespace keel
