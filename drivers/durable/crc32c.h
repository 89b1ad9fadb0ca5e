// CRC32C (Castagnoli), the entry checksum of format version 2 stores
// (rfcs/0003-durable-layout.md). Computed with the SSE4.2 crc32 instruction
// when the CPU has it, else with a table; both give the same value, so a
// store moves freely between machines.
//
// Thread safety: pure functions.
#ifndef KEEL_DRIVERS_DURABLE_CRC32C_H_
#define KEEL_DRIVERS_DURABLE_CRC32C_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace keel::durable {

// The standard CRC32C of `bytes` (CRC32C("123456789") == 0xe3069283).
uint32_t Crc32c(absl::string_view bytes);

// The portable implementation, exposed so tests can compare both paths.
uint32_t Crc32cPortable(absl::string_view bytes);

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_CRC32C_H_
