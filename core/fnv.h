// FNV-1a hashes (32 and 64 bit): small, stable across platforms and
// releases, so they may be persisted (cursor stream tags, record checksums,
// partition selection). Not for security.
//
// Thread safety: pure functions.
#ifndef KEEL_CORE_FNV_H_
#define KEEL_CORE_FNV_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace keel {

inline uint32_t Fnv1a32(absl::string_view bytes) {
  uint32_t hash = 2166136261u;
  for (char c : bytes) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 16777619u;
  }
  return hash;
}

inline uint64_t Fnv1a64(absl::string_view bytes) {
  uint64_t hash = 14695981039346656037ull;
  for (char c : bytes) {
    hash ^= static_cast<uint8_t>(c);
    hash *= 1099511628211ull;
  }
  return hash;
}

}  // namespace keel

#endif  // KEEL_CORE_FNV_H_
