// SseFrameCache: a cached frame is byte for byte the frame AppendSseFrame
// builds, and entries of other servers, epochs or streams are never reused.
#include <gtest/gtest.h>

#include "keel/cmd/keel/server/sse_frames.h"
#include "keel/core/cursor.h"

namespace keel::server {
namespace {

Event MakeEvent(std::string stream, uint64_t sequence, std::string payload) {
  Event event;
  event.stream = std::move(stream);
  event.sequence = sequence;
  event.id = "id-" + std::to_string(sequence);
  event.type = "t";
  event.time = absl::FromUnixSeconds(1);
  event.payload = std::move(payload);
  event.content_type = "application/json";
  return event;
}

std::string Uncached(const Event& event, uint64_t epoch) {
  std::string out;
  AppendSseFrame(event, epoch, out);
  return out;
}

std::string Cached(SseFrameCache& cache, uint64_t owner, const Event& event, uint64_t epoch) {
  std::string out = "prefix";
  cache.Append(owner, event, epoch, out);
  return out.substr(6);
}

TEST(SseFrameTest, AnEventIsItsCursorItsTypeAndItsJsonOnOneDataLine) {
  const Event event = MakeEvent("s", 7, "{\"n\":1}");
  const std::string cursor = Cursor::For("s", 5, 7).Encode();
  EXPECT_EQ(Uncached(event, 5),
            "id: " + cursor + "\nevent: t\ndata: {\"stream\":\"s\",\"sequence\":7,\"cursor\":\"" +
                cursor +
                "\",\"id\":\"id-7\",\"type\":\"t\",\"time\":\"1970-01-01T00:00:01.000000000Z\","
                "\"data\":{\"n\":1}}\n\n");
}

TEST(SseFrameTest, AJsonPayloadSpanningLinesTakesOneDataLinePerLine) {
  // A library publisher's JSON is stored as given, line breaks included.
  const Event event = MakeEvent("s", 7, "{\"a\":\r\n1,\n\"b\":2}");
  const std::string frame = Uncached(event, 5);
  EXPECT_NE(frame.find("\"data\":{\"a\":\ndata: 1,\ndata: \"b\":2}}\n\n"), std::string::npos)
      << frame;
  EXPECT_EQ(frame.find('\r'), std::string::npos) << frame;
}

TEST(SseFrameTest, ALoneCarriageReturnIsDroppedWithoutANewDataLine) {
  const Event event = MakeEvent("s", 7, "{\"a\":1\r}");
  const std::string frame = Uncached(event, 5);
  EXPECT_NE(frame.find("\ndata: {\"stream\""), std::string::npos) << frame;
  EXPECT_NE(frame.find("\"data\":{\"a\":1}}\n\n"), std::string::npos) << frame;
  EXPECT_EQ(frame.find('\r'), std::string::npos) << frame;
}

TEST(SseFrameTest, TenantBinaryDataAndAttributesFollowTheTime) {
  Event event = MakeEvent("s", 7, std::string("\x01\x02\xff", 3));
  event.tenant = "acme";
  event.content_type = "application/octet-stream";
  event.attributes["k"] = "v";
  const std::string frame = Uncached(event, 5);
  EXPECT_NE(frame.find("\"time\":\"1970-01-01T00:00:01.000000000Z\",\"tenant\":\"acme\","
                       "\"dataBase64\":\"AQL/\",\"contentType\":\"application/octet-stream\","
                       "\"attributes\":{\"k\":\"v\"}}\n\n"),
            std::string::npos)
      << frame;
}

TEST(SseFrameTest, StringsAreEscapedAsJson) {
  Event event = MakeEvent("s", 7, "1");
  event.id = "quote\"tab\t";
  EXPECT_NE(Uncached(event, 5).find("\"id\":\"quote\\\"tab\\t\""), std::string::npos)
      << Uncached(event, 5);
}

TEST(SseFrameCacheTest, ServesTheSameBytesAsAFreshFrame) {
  SseFrameCache cache;
  const Event event = MakeEvent("s", 7, "{\"n\":1}");
  EXPECT_EQ(Cached(cache, 1, event, 5), Uncached(event, 5));
  EXPECT_EQ(Cached(cache, 1, event, 5), Uncached(event, 5));  // A hit.
}

TEST(SseFrameCacheTest, KeysOnServerEpochStreamAndSequence) {
  SseFrameCache cache;
  const Event first = MakeEvent("s", 7, "1");
  ASSERT_EQ(Cached(cache, 1, first, 5), Uncached(first, 5));
  // Same stream and sequence elsewhere: another server's bus, another epoch.
  const Event other = MakeEvent("s", 7, "2");
  EXPECT_EQ(Cached(cache, 2, other, 5), Uncached(other, 5));
  EXPECT_EQ(Cached(cache, 1, other, 6), Uncached(other, 6));
  const Event other_stream = MakeEvent("t", 7, "3");
  EXPECT_EQ(Cached(cache, 1, other_stream, 5), Uncached(other_stream, 5));
}

TEST(SseFrameCacheTest, NoticesAreFramedButNotCached) {
  SseFrameCache cache;
  Event gap = MakeEvent("s", 0, "");
  gap.type = kGapNoticeType;
  gap.attributes[kNoticeFirst] = "2";
  gap.attributes[kNoticeLast] = "4";
  gap.attributes[kNoticeCount] = "3";
  EXPECT_EQ(Cached(cache, 1, gap, 5), Uncached(gap, 5));
  gap.attributes[kNoticeLast] = "9";
  EXPECT_EQ(Cached(cache, 1, gap, 5), Uncached(gap, 5));
}

}  // namespace
}  // namespace keel::server
