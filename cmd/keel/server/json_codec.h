// JSON forms of the HTTP API v1 (rfcs/0004-http-api.md): events and
// receipts in responses (publish bodies: publish_body.h).
//
// Event output is written by hand rather than through a JSON DOM because the
// payload of a JSON event is embedded verbatim (it was validated on publish)
// — no re-parse per delivery, which matters for SSE fan-out.
//
// Thread safety: pure functions.
#ifndef KEEL_CMD_KEEL_SERVER_JSON_CODEC_H_
#define KEEL_CMD_KEEL_SERVER_JSON_CODEC_H_

#include <array>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "keel/core/event.h"
#include "keel/core/event_bus.h"
#include "keel/core/replayer.h"
#include "keel/core/tiered_storage.h"

namespace keel::server {

inline constexpr char kJsonContentType[] = "application/json";

// The bytes that stand for themselves in a JSON string as the server reads
// and writes one: printable ASCII but the quote and the backslash. A lookup
// per byte: three comparisons per byte took most of the time of checking
// whether a string needs escapes, or reading one in a publish body.
inline constexpr std::array<bool, 256> kPlainJsonChars = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x7f; ++c) plain[c] = c != '"' && c != '\\';
  return plain;
}();

// Appends one event as a JSON object (with its cursor).
void AppendEventJson(const Event& event, uint64_t epoch, std::string& out);
// The same with the event's cursor token already encoded.
void AppendEventJson(const Event& event, absl::string_view cursor, std::string& out);

std::string ReceiptJson(const Receipt& receipt);
void AppendReceiptJson(const Receipt& receipt, std::string& out);
std::string ReceiptsJson(absl::Span<const Receipt> receipts);
std::string PageJson(const ReplayPage& page, absl::string_view stream, uint64_t epoch);
// With `tiers` (a bus with a cold tier, EventBus::tiers()) the object also
// says where the stream's events are: "hot" (firstSequence, count) and,
// once some are cold, "cold" (firstSequence, count, segments, bytes).
std::string StreamInfoJson(const StreamInfo& info, const StreamTiers* tiers = nullptr);
// `tiers`, when not empty, holds one entry for each of `infos`.
std::string StreamListJson(const std::vector<StreamInfo>& infos,
                           const std::vector<StreamTiers>& tiers = {});

// A JSON string literal (quoted and escaped); bytes that do not form UTF-8
// become U+FFFD, so the literal is always valid JSON.
std::string JsonString(absl::string_view text);
void AppendJsonString(absl::string_view text, std::string& out);
// RFC 3339 UTC with nanoseconds: 2026-12-01T08:21:59.000000000Z.
std::string FormatRfc3339(absl::Time time);
void AppendRfc3339(absl::Time time, std::string& out);

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_JSON_CODEC_H_
