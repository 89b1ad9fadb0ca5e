#include "keel/drivers/durable/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace keel::durable {
namespace {

constexpr uint32_t kPolynomial = 0x82f63b78;  // Reversed Castagnoli polynomial.

constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1) ? kPolynomial : 0);
    table[i] = crc;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = MakeTable();

#if defined(__x86_64__)
// Compiled for SSE4.2 regardless of the build's -march; only called after
// the CPU check below.
__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(absl::string_view bytes) {
  const char* p = bytes.data();
  size_t n = bytes.size();
  uint64_t crc = 0xffffffffu;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);  // Unaligned load.
    crc = _mm_crc32_u64(crc, word);
  }
  uint32_t crc32 = static_cast<uint32_t>(crc);
  for (; n > 0; ++p, --n) crc32 = _mm_crc32_u8(crc32, static_cast<uint8_t>(*p));
  return crc32 ^ 0xffffffffu;
}

bool HasSse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

}  // namespace

uint32_t Crc32cPortable(absl::string_view bytes) {
  uint32_t crc = 0xffffffffu;
  for (char c : bytes) crc = (crc >> 8) ^ kTable[(crc ^ static_cast<uint8_t>(c)) & 0xff];
  return crc ^ 0xffffffffu;
}

uint32_t Crc32c(absl::string_view bytes) {
#if defined(__x86_64__)
  if (HasSse42()) return Crc32cSse42(bytes);
#endif
  return Crc32cPortable(bytes);
}

}  // namespace keel::durable
