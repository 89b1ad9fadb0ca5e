// Dead letters round-trip to the event they were made from: what a redrive
// sends (OriginalEvent) is that event — its stream, sequence, id, publish
// time, payload and own attributes — and none of the keel.dlq.* ones.
#include "keel/core/dead_letters.h"

#include <gtest/gtest.h>

namespace keel {
namespace {

Event Consumed() {
  Event event;
  event.stream = "orders";
  event.sequence = 42;
  event.id = "order-42";
  event.time = absl::FromUnixNanos(1764900000123456789);
  event.type = "order.created";
  event.tenant = "acme";
  event.payload = R"({"n":42})";
  event.content_type = "application/json";
  event.attributes["region"] = "eu";
  return event;
}

// As the bus stores the letter: its own sequence and time on the
// dead-letter stream.
Event Stored(Event letter) {
  letter.sequence = 7;
  letter.time = absl::FromUnixSeconds(1764990000);
  return letter;
}

TEST(DeadLettersTest, OriginalEventIsTheEventTheLetterWasMadeFrom) {
  const Event event = Consumed();
  absl::StatusOr<DeadLetter> letter =
      DecodeDeadLetter(Stored(MakeDeadLetter(event, "billing", "HTTP 400", 3)), /*epoch=*/1);
  ASSERT_TRUE(letter.ok()) << letter.status();
  EXPECT_EQ(letter->attempts, 3u);
  const Event original = OriginalEvent(*letter);
  EXPECT_EQ(original.stream, "orders");
  EXPECT_EQ(original.sequence, 42u);
  EXPECT_EQ(original.id, "order-42");
  EXPECT_EQ(original.time, event.time);
  EXPECT_EQ(original.type, event.type);
  EXPECT_EQ(original.tenant, event.tenant);
  EXPECT_EQ(original.payload, event.payload);
  EXPECT_EQ(original.content_type, event.content_type);
  EXPECT_EQ(original.attributes, event.attributes);
}

// Letters made before the source time was kept give their own time.
TEST(DeadLettersTest, ALetterWithoutTheSourceTimeGivesItsOwn) {
  Event made = MakeDeadLetter(Consumed(), "billing", "HTTP 400", 1);
  made.attributes.erase(kDlqSourceTime);
  absl::StatusOr<DeadLetter> letter = DecodeDeadLetter(Stored(std::move(made)), 1);
  ASSERT_TRUE(letter.ok());
  EXPECT_EQ(OriginalEvent(*letter).time, absl::FromUnixSeconds(1764990000));
}

}  // namespace
}  // namespace keel
