#include "keel/core/wire_format.h"

namespace keel::wire {

bool GetVarint(absl::string_view& in, uint64_t& value) {
  value = 0;
  for (size_t i = 0; i < in.size() && i < 10; ++i) {
    const uint8_t byte = static_cast<uint8_t>(in[i]);
    value |= uint64_t{byte & 0x7fu} << (7 * i);
    if (byte < 0x80) {
      in.remove_prefix(i + 1);
      return true;
    }
  }
  return false;
}

bool GetBytes(absl::string_view& in, absl::string_view& bytes) {
  uint64_t size;
  if (!GetVarint(in, size) || size > in.size()) return false;
  bytes = in.substr(0, size);
  in.remove_prefix(size);
  return true;
}

bool GetTag(absl::string_view& in, uint32_t& field, WireType& type) {
  uint64_t tag;
  if (!GetVarint(in, tag) || tag > UINT32_MAX) return false;
  field = static_cast<uint32_t>(tag >> 3);
  type = static_cast<WireType>(tag & 7);
  return field != 0 && (type == kVarint || type == kFixed64 || type == kLengthDelimited ||
                        type == kFixed32);
}

bool SkipValue(absl::string_view& in, WireType type) {
  uint64_t ignored;
  absl::string_view bytes;
  switch (type) {
    case kVarint:
      return GetVarint(in, ignored);
    case kLengthDelimited:
      return GetBytes(in, bytes);
    case kFixed64:
    case kFixed32: {
      const size_t size = type == kFixed64 ? 8 : 4;
      if (in.size() < size) return false;
      in.remove_prefix(size);
      return true;
    }
  }
  return false;
}

}  // namespace keel::wire
