#include "core/event_codec.h"

#include "core/proto/event.pb.h"

namespace keel {
namespace {

void ToProto(const Event& event, bool with_key_fields, keel::v1::Event& proto) {
  if (with_key_fields) {
    proto.set_stream(event.stream);
    proto.set_sequence(event.sequence);
  }
  proto.set_id(event.id);
  proto.set_type(event.type);
  proto.set_tenant(event.tenant);
  proto.set_time_unix_nanos(absl::ToUnixNanos(event.time));
  proto.set_payload(event.payload);
  proto.set_content_type(event.content_type);
  for (const auto& [key, value] : event.attributes) (*proto.mutable_attributes())[key] = value;
  if (event.idempotency_key) proto.set_idempotency_key(*event.idempotency_key);
}

}  // namespace

std::string EncodeEvent(const Event& event) {
  std::string out;
  AppendEncodedEvent(event, out);
  return out;
}

void AppendEncodedEvent(const Event& event, std::string& out) {
  keel::v1::Event proto;
  ToProto(event, true, proto);
  proto.AppendToString(&out);
}

void AppendEncodedEventBody(const Event& event, std::string& out) {
  keel::v1::Event proto;
  ToProto(event, false, proto);
  proto.AppendToString(&out);
}

absl::StatusOr<Event> DecodeEvent(absl::string_view bytes) {
  keel::v1::Event proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::DataLossError("event envelope does not decode");
  }
  Event event;
  event.stream = std::move(*proto.mutable_stream());
  event.sequence = proto.sequence();
  event.id = std::move(*proto.mutable_id());
  event.type = std::move(*proto.mutable_type());
  event.tenant = std::move(*proto.mutable_tenant());
  event.time = absl::FromUnixNanos(proto.time_unix_nanos());
  event.payload = std::move(*proto.mutable_payload());
  event.content_type = std::move(*proto.mutable_content_type());
  for (auto& [key, value] : *proto.mutable_attributes()) event.attributes.emplace(key, value);
  if (proto.has_idempotency_key()) event.idempotency_key = proto.idempotency_key();
  return event;
}

}  // namespace keel
