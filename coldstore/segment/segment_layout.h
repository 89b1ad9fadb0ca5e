// The byte layout of a cold segment, version 1 (rfcs/0008-cold-segments.md,
// "Segment format"); shared by the writer and the readers. Integers are
// big-endian.
//
//   segment = header block* index footer
//   header  = "KEELSEG1" version:u8(=1) entry_check:u8(1|2) stream_size:u16 stream
//             epoch:u64 first:u64 last:u64 count:u64 min_time:i64 max_time:i64
//             blocks:u32 header_check:u32
//   block   = entry+ block_check:u32
//   entry   = time:i64 value_size:u32 value
//   index   = (first:u64 offset:u64 size:u64){blocks} index_check:u32
//   footer  = index_offset:u64 index_size:u64 segment_check:u32 footer_check:u32 "KEELSEGE"
//
// Times are Unix nanoseconds. Every check is CRC32C of the bytes before it
// in its part (header, block, index, footer); segment_check covers every
// byte before the footer and is the checksum in the object's name.
//
// Thread safety: pure functions.
#ifndef KEEL_COLDSTORE_SEGMENT_SEGMENT_LAYOUT_H_
#define KEEL_COLDSTORE_SEGMENT_SEGMENT_LAYOUT_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace keel::segment_layout {

inline constexpr absl::string_view kMagic = "KEELSEG1";
inline constexpr absl::string_view kEndMagic = "KEELSEGE";
inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kHeaderFixedBytes = 8 + 1 + 1 + 2 + 8 * 6 + 4 + 4;
inline constexpr size_t kIndexPointBytes = 24;
inline constexpr size_t kFooterBytes = 8 + 8 + 4 + 4 + 8;
inline constexpr size_t kEntryFixedBytes = 8 + 4;

void PutU16(std::string& out, uint16_t v);
void PutU32(std::string& out, uint32_t v);
void PutU64(std::string& out, uint64_t v);
// Requires enough bytes at `at`.
uint16_t GetU16(absl::string_view in, size_t at);
uint32_t GetU32(absl::string_view in, size_t at);
uint64_t GetU64(absl::string_view in, size_t at);

}  // namespace keel::segment_layout

#endif  // KEEL_COLDSTORE_SEGMENT_SEGMENT_LAYOUT_H_
