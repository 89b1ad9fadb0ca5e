// The heap memory the daemon's allocations hold now, for /metrics: what
// the process uses, where its resident size also counts memory the
// allocator keeps after it was freed (see cmd/keel/memory_release.h).
#ifndef KEEL_CMD_KEEL_SERVER_PROCESS_MEMORY_H_
#define KEEL_CMD_KEEL_SERVER_PROCESS_MEMORY_H_

#include <cstdint>

namespace keel::server {

// Bytes of heap in use (glibc's mallinfo2: allocated chunks in every arena
// and the chunks mapped on their own); 0 where unknown.
uint64_t HeapInUseBytes();

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_PROCESS_MEMORY_H_
