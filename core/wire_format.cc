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
  const size_t available = in.size();
  uint64_t tag;
  if (!GetVarint(in, tag) || available - in.size() > 5) return false;
  field = static_cast<uint32_t>(tag) >> 3;  // Bits past 32 are dropped, as protobuf does.
  type = static_cast<WireType>(tag & 7);
  return field != 0 && type <= kFixed32;
}

namespace {

// Protobuf's default recursion limit.
constexpr int kMaxGroupDepth = 100;

bool Skip(absl::string_view& in, uint32_t field, WireType type, int depth) {
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
    case kStartGroup:
      if (depth >= kMaxGroupDepth) return false;
      while (true) {
        uint32_t inner_field;
        WireType inner_type;
        if (!GetTag(in, inner_field, inner_type)) return false;
        if (inner_type == kEndGroup) return inner_field == field;
        if (!Skip(in, inner_field, inner_type, depth + 1)) return false;
      }
    case kEndGroup:
      return false;
  }
  return false;
}

}  // namespace

bool SkipValue(absl::string_view& in, uint32_t field, WireType type) {
  return Skip(in, field, type, 0);
}

}  // namespace keel::wire
