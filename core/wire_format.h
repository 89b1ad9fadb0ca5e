// Protocol-buffer wire format primitives (varints, tags, length-delimited
// fields), enough to read and write keel.v1.Event without building a message
// object: the durable driver encodes and decodes every stored event, and the
// message round trip cost more than the rest of a replay.
//
// Thread safety: pure functions.
#ifndef KEEL_CORE_WIRE_FORMAT_H_
#define KEEL_CORE_WIRE_FORMAT_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace keel::wire {

enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,  // Deprecated groups: read only to be skipped.
  kEndGroup = 4,
  kFixed32 = 5,
};

inline void PutVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>(value | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

inline size_t VarintSize(uint64_t value) {
  size_t size = 1;
  for (; value >= 0x80; value >>= 7) ++size;
  return size;
}

inline void PutTag(std::string& out, uint32_t field, WireType type) {
  PutVarint(out, (uint64_t{field} << 3) | type);
}

inline void PutBytesField(std::string& out, uint32_t field, absl::string_view bytes) {
  PutTag(out, field, kLengthDelimited);
  PutVarint(out, bytes.size());
  out.append(bytes.data(), bytes.size());
}

// Size of PutBytesField's output for a field number below 16.
inline size_t BytesFieldSize(absl::string_view bytes) {
  return 1 + VarintSize(bytes.size()) + bytes.size();
}

// Each reader consumes from `in` and returns false on truncated or
// malformed input.
bool GetVarint(absl::string_view& in, uint64_t& value);
bool GetBytes(absl::string_view& in, absl::string_view& bytes);
// Reads a tag as protobuf's parser does: at most 5 bytes, taken modulo
// 2^32; fails on field number 0 and on wire types 6 and 7.
bool GetTag(absl::string_view& in, uint32_t& field, WireType& type);
// Skips the value of field `field` of wire type `type` (an unknown field),
// a group with everything up to its end (as protobuf skips unknown groups,
// nested at most 100 deep); fails on an end-group tag, which only a group
// may hold.
bool SkipValue(absl::string_view& in, uint32_t field, WireType type);

}  // namespace keel::wire

#endif  // KEEL_CORE_WIRE_FORMAT_H_
