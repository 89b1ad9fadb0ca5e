// Gives the daemon's freed heap memory back to the operating system.
//
// glibc's allocator keeps memory a thread freed in that thread's arena for
// later allocations, and gives back only what lies at the top of an arena.
// A daemon with dozens of threads (the blocking pool, the I/O and SSE
// threads, the store's) so holds freed memory in many arenas, each sized
// by its own peak, and its resident size climbs for many minutes under a
// steady load while its live memory stays flat. malloc_trim returns the
// free pages of every arena; run now and then, the resident size follows
// the live memory.
#ifndef KEEL_CMD_KEEL_MEMORY_RELEASE_H_
#define KEEL_CMD_KEEL_MEMORY_RELEASE_H_

#include "absl/time/time.h"

namespace keel::cli {

// How often the daemon releases freed memory (between signals it waits for).
inline constexpr absl::Duration kMemoryReleaseInterval = absl::Seconds(10);

// Returns the free pages of every allocator arena to the system.
void ReleaseFreeMemory();

}  // namespace keel::cli

#endif  // KEEL_CMD_KEEL_MEMORY_RELEASE_H_
