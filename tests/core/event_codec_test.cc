// The hand-written keel.v1.Event codec against protobuf's own: what one
// writes the other reads, field for field, and damaged input is rejected.
#include "keel/core/event_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/core/proto/event.pb.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel {
namespace {

using ::keel::testing::StatusIs;

Event FullEvent() {
  Event event;
  event.stream = "orders";
  event.sequence = 300;
  event.id = "id-1";
  event.type = "order.created";
  event.tenant = "acme";
  event.time = absl::FromUnixNanos(1'700'000'000'123'456'789);
  event.payload = std::string("\0binary\xff", 8);
  event.content_type = "application/octet-stream";
  event.attributes = {{"a", "1"}, {"empty", ""}, {"k", std::string(200, 'v')}};
  event.idempotency_key = "";
  return event;
}

TEST(EventCodecTest, ProtobufParsesWhatWeWrite) {
  const Event event = FullEvent();
  keel::v1::Event proto;
  ASSERT_TRUE(proto.ParseFromString(EncodeEvent(event)));
  EXPECT_EQ(proto.stream(), event.stream);
  EXPECT_EQ(proto.sequence(), event.sequence);
  EXPECT_EQ(proto.id(), event.id);
  EXPECT_EQ(proto.type(), event.type);
  EXPECT_EQ(proto.tenant(), event.tenant);
  EXPECT_EQ(proto.time_unix_nanos(), absl::ToUnixNanos(event.time));
  EXPECT_EQ(proto.payload(), event.payload);
  EXPECT_EQ(proto.content_type(), event.content_type);
  EXPECT_EQ(proto.attributes().size(), 3);
  EXPECT_EQ(proto.attributes().at("k"), event.attributes.at("k"));
  EXPECT_TRUE(proto.has_idempotency_key());
}

TEST(EventCodecTest, WeReadWhatProtobufWrites) {
  const Event event = FullEvent();
  keel::v1::Event proto;
  proto.set_stream(event.stream);
  proto.set_sequence(event.sequence);
  proto.set_id(event.id);
  proto.set_type(event.type);
  proto.set_tenant(event.tenant);
  proto.set_time_unix_nanos(absl::ToUnixNanos(event.time));
  proto.set_payload(event.payload);
  proto.set_content_type(event.content_type);
  for (const auto& [key, value] : event.attributes) (*proto.mutable_attributes())[key] = value;
  proto.set_idempotency_key("");
  ASSERT_OK_AND_ASSIGN(Event decoded, DecodeEvent(proto.SerializeAsString()));
  EXPECT_EQ(decoded, event);
}

TEST(EventCodecTest, MatchesProtobufBytesWithoutAttributes) {
  Event event = FullEvent();
  event.attributes.clear();  // Protobuf's map order is unspecified; the rest is not.
  event.time = absl::InfinitePast();  // Negative: a ten-byte varint.
  keel::v1::Event proto;
  ASSERT_TRUE(proto.ParseFromString(EncodeEvent(event)));
  EXPECT_EQ(proto.SerializeAsString(), EncodeEvent(event));
}

TEST(EventCodecTest, DefaultsRoundTrip) {
  Event event;
  event.time = absl::UnixEpoch();
  EXPECT_EQ(EncodeEvent(event), "");  // Proto3 omits defaults.
  ASSERT_OK_AND_ASSIGN(Event decoded, DecodeEvent(""));
  EXPECT_EQ(decoded, event);
}

TEST(EventCodecTest, BodyLeavesStreamAndSequenceOut) {
  std::string body;
  AppendEncodedEventBody(FullEvent(), body);
  ASSERT_OK_AND_ASSIGN(Event decoded, DecodeEvent(body));
  EXPECT_EQ(decoded.stream, "");
  EXPECT_EQ(decoded.sequence, 0u);
  EXPECT_EQ(decoded.type, "order.created");
}

TEST(EventCodecTest, SkipsUnknownFields) {
  std::string bytes = EncodeEvent(FullEvent());
  bytes += std::string("\xa8\x06\x05", 3);                   // Field 101, varint.
  bytes += std::string("\xb1\x06", 2) + std::string(8, 'x');  // Field 102, fixed64.
  bytes += std::string("\xba\x06\x02hi", 5);                  // Field 103, bytes.
  bytes += std::string("\xc5\x06", 2) + std::string(4, 'y');  // Field 104, fixed32.
  ASSERT_OK_AND_ASSIGN(Event decoded, DecodeEvent(bytes));
  EXPECT_EQ(decoded, FullEvent());
}

TEST(EventCodecTest, RejectsDamagedInput) {
  const std::string bytes = EncodeEvent(FullEvent());
  int damaged = 0;
  for (size_t cut = 1; cut < bytes.size(); ++cut) {
    absl::StatusOr<Event> decoded = DecodeEvent(absl::string_view(bytes).substr(0, cut));
    // A cut between two fields is a valid shorter event; inside one, loss.
    if (!decoded.ok()) {
      EXPECT_THAT(decoded, StatusIs(absl::StatusCode::kDataLoss));
      ++damaged;
    }
  }
  EXPECT_GT(damaged, static_cast<int>(bytes.size()) / 2) << "most cuts fall inside a field";
  EXPECT_THAT(DecodeEvent(absl::string_view(bytes).substr(0, bytes.size() - 1)),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(DecodeEvent("\xff\xfe corrupt"), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(DecodeEvent(std::string("\x1a\x05id", 4)), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(DecodeEvent(std::string("\x00", 1)), StatusIs(absl::StatusCode::kDataLoss));
}

// Found by fuzzing (stored_entry_fuzzer): protobuf reads a tag of five
// bytes whose value needs more than 32 bits by dropping the excess bits;
// the reader refused the envelope that protobuf reads.
TEST(EventCodecTest, ReadsAFiveByteTagAsProtobufDoes) {
  // Field 8 as fixed32, then an unknown varint field whose 5-byte tag
  // overflows 32 bits, then its value.
  const std::string bytes("\x45\x8d\xff\xfe\x90\x98\x9a\x96\x88\x72\x60", 11);
  keel::v1::Event proto;
  ASSERT_TRUE(proto.ParseFromString(bytes));
  ASSERT_OK_AND_ASSIGN(Event decoded, DecodeEvent(bytes));
  EXPECT_EQ(decoded, DecodeEvent(proto.SerializeAsString()).value());
  // Six bytes are more than a tag has: protobuf refuses them, and so do we.
  const std::string six_byte_tag("\x98\x9a\x96\x88\x82\x00\x60", 7);
  EXPECT_FALSE(proto.ParseFromString(six_byte_tag));
  EXPECT_THAT(DecodeEvent(six_byte_tag), StatusIs(absl::StatusCode::kDataLoss));
}

// Unknown groups (a deprecated wire type protobuf still skips) are skipped
// whole, nested ones included; an end without its start, or the end of
// another field's group, is damage, for protobuf as for us.
TEST(EventCodecTest, SkipsUnknownGroupsAsProtobufDoes) {
  const std::string group_of_field_20 =
      std::string("\xa3\x01", 2) +                   // Start group 20.
      std::string("\x08\x05", 2) +                   // Field 1, varint.
      std::string("\xab\x01\x0a\x01x\xac\x01", 7) +  // Group 21 holding field 1, bytes.
      std::string("\xa4\x01", 2);                    // End group 20.
  const std::string bytes = EncodeEvent(FullEvent()) + group_of_field_20;
  keel::v1::Event proto;
  ASSERT_TRUE(proto.ParseFromString(bytes));
  ASSERT_OK_AND_ASSIGN(Event decoded, DecodeEvent(bytes));
  EXPECT_EQ(decoded, FullEvent());

  for (const std::string& damaged :
       {std::string("\xa4\x01", 2),                  // An end alone.
        std::string("\xa3\x01\x08\x05\xac\x01", 6),  // Ends group 21, not 20.
        std::string("\xa3\x01\x08\x05", 4)}) {       // Never ends.
    EXPECT_FALSE(proto.ParseFromString(EncodeEvent(FullEvent()) + damaged));
    EXPECT_THAT(DecodeEvent(EncodeEvent(FullEvent()) + damaged),
                StatusIs(absl::StatusCode::kDataLoss));
  }
}

}  // namespace
}  // namespace keel
