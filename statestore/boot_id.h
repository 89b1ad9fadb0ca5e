// KernelBootId: the id the Linux kernel draws at each boot
// (/proc/sys/kernel/random/boot_id), or "" where it cannot be read.
//
// Why: a write(2) that returned is in the kernel's page cache, which the
// death of the writing process does not drop; only the machine stopping
// can. A store whose unsynced writes are plain writes to files can so name
// the span they last by this id (StateStore::UnsyncedWritesLifetime).
// Containers share their host's kernel, and so its page cache and its id.
//
// Thread safety: safe to call from any thread.
#ifndef KEEL_STATESTORE_BOOT_ID_H_
#define KEEL_STATESTORE_BOOT_ID_H_

#include <string>

namespace keel {

std::string KernelBootId();

}  // namespace keel

#endif  // KEEL_STATESTORE_BOOT_ID_H_
