#include "keel/coldstore/segment/segment_layout.h"

namespace keel::segment_layout {

void PutU16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v));
}

void PutU32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

void PutU64(std::string& out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

uint16_t GetU16(absl::string_view in, size_t at) {
  return static_cast<uint16_t>((uint16_t{static_cast<uint8_t>(in[at])} << 8) |
                               static_cast<uint8_t>(in[at + 1]));
}

uint32_t GetU32(absl::string_view in, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<uint8_t>(in[at + i]);
  return v;
}

uint64_t GetU64(absl::string_view in, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(in[at + i]);
  return v;
}

}  // namespace keel::segment_layout
