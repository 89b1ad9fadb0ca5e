// keel.v1.Event (core/proto/event.proto) read and written field by field.
// The output is what protobuf's serializer writes (fields in number order,
// proto3 defaults omitted; map entries sorted by key, which the format
// allows in any order), and the reader accepts anything protobuf's parser
// accepts for this message, including unknown fields.
#include "keel/core/event_codec.h"

#include <utility>

#include "keel/core/status_macros.h"
#include "keel/core/wire_format.h"

namespace keel {
namespace {

using wire::PutBytesField;

// Proto3 field numbers of keel.v1.Event.
enum Field : uint32_t {
  kStream = 1,
  kSequence = 2,
  kId = 3,
  kType = 4,
  kTenant = 5,
  kTimeUnixNanos = 6,
  kPayload = 7,
  kContentType = 8,
  kAttributes = 9,
  kIdempotencyKey = 10,
};

void PutStringIfSet(std::string& out, uint32_t field, absl::string_view value) {
  if (!value.empty()) PutBytesField(out, field, value);
}

void PutVarintIfSet(std::string& out, uint32_t field, uint64_t value) {
  if (value == 0) return;
  wire::PutTag(out, field, wire::kVarint);
  wire::PutVarint(out, value);
}

// Upper bound of the encoded size, so the output grows once.
size_t EncodedSizeBound(const Event& event) {
  size_t size = 32;  // Stream/sequence/time framing.
  for (absl::string_view field : {absl::string_view(event.stream), absl::string_view(event.id),
                                  absl::string_view(event.type), absl::string_view(event.tenant),
                                  absl::string_view(event.payload),
                                  absl::string_view(event.content_type)}) {
    size += wire::BytesFieldSize(field);
  }
  for (const auto& [key, value] : event.attributes) {
    size += 12 + key.size() + value.size();
  }
  if (event.idempotency_key) size += wire::BytesFieldSize(*event.idempotency_key);
  return size;
}

void AppendFields(const Event& event, bool with_key_fields, std::string& out) {
  out.reserve(out.size() + EncodedSizeBound(event));
  if (with_key_fields) {
    PutStringIfSet(out, kStream, event.stream);
    PutVarintIfSet(out, kSequence, event.sequence);
  }
  PutStringIfSet(out, kId, event.id);
  PutStringIfSet(out, kType, event.type);
  PutStringIfSet(out, kTenant, event.tenant);
  PutVarintIfSet(out, kTimeUnixNanos, static_cast<uint64_t>(absl::ToUnixNanos(event.time)));
  PutStringIfSet(out, kPayload, event.payload);
  PutStringIfSet(out, kContentType, event.content_type);
  std::string entry;
  for (const auto& [key, value] : event.attributes) {
    entry.clear();
    PutBytesField(entry, 1, key);  // Map entries always carry key and value.
    PutBytesField(entry, 2, value);
    PutBytesField(out, kAttributes, entry);
  }
  if (event.idempotency_key) PutBytesField(out, kIdempotencyKey, *event.idempotency_key);
}

bool ParseAttribute(absl::string_view entry, Event& event) {
  absl::string_view key, value;
  while (!entry.empty()) {
    uint32_t field;
    wire::WireType type;
    if (!wire::GetTag(entry, field, type)) return false;
    if ((field == 1 || field == 2) && type == wire::kLengthDelimited) {
      if (!wire::GetBytes(entry, field == 1 ? key : value)) return false;
    } else if (!wire::SkipValue(entry, field, type)) {
      return false;
    }
  }
  event.attributes.insert_or_assign(std::string(key), std::string(value));  // Last wins.
  return true;
}

std::string* StringField(Event& event, uint32_t field) {
  switch (field) {
    case kStream: return &event.stream;
    case kId: return &event.id;
    case kType: return &event.type;
    case kTenant: return &event.tenant;
    case kPayload: return &event.payload;
    case kContentType: return &event.content_type;
    default: return nullptr;
  }
}

// One field of the envelope; unknown fields (and known numbers with another
// wire type, as protobuf does) are skipped.
bool ParseField(absl::string_view& in, Event& event) {
  uint32_t field;
  wire::WireType type;
  if (!wire::GetTag(in, field, type)) return false;
  if (type == wire::kVarint && (field == kSequence || field == kTimeUnixNanos)) {
    uint64_t value;
    if (!wire::GetVarint(in, value)) return false;
    if (field == kSequence) event.sequence = value;
    if (field == kTimeUnixNanos) event.time = absl::FromUnixNanos(static_cast<int64_t>(value));
    return true;
  }
  if (type != wire::kLengthDelimited) return wire::SkipValue(in, field, type);
  absl::string_view bytes;
  if (!wire::GetBytes(in, bytes)) return false;
  if (std::string* target = StringField(event, field)) {
    target->assign(bytes.data(), bytes.size());
  } else if (field == kAttributes) {
    return ParseAttribute(bytes, event);
  } else if (field == kIdempotencyKey) {
    event.idempotency_key.emplace(bytes);
  }
  return true;
}

}  // namespace

std::string EncodeEvent(const Event& event) {
  std::string out;
  AppendEncodedEvent(event, out);
  return out;
}

void AppendEncodedEvent(const Event& event, std::string& out) { AppendFields(event, true, out); }

void AppendEncodedEventBody(const Event& event, std::string& out) {
  AppendFields(event, false, out);
}

absl::Status DecodeEventInto(absl::string_view bytes, Event& event) {
  event.time = absl::FromUnixNanos(0);  // Proto3 default of time_unix_nanos.
  while (!bytes.empty()) {
    if (!ParseField(bytes, event)) return absl::DataLossError("event envelope does not decode");
  }
  return absl::OkStatus();
}

absl::StatusOr<Event> DecodeEvent(absl::string_view bytes) {
  Event event;
  KEEL_RETURN_IF_ERROR(DecodeEventInto(bytes, event));
  return event;
}

}  // namespace keel
