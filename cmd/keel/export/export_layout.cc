#include "keel/cmd/keel/export/export_layout.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace keel::lakehouse {
namespace {

std::string Padded(uint64_t sequence) { return absl::StrFormat("%020u", sequence); }

}  // namespace

absl::string_view EventFileSuffix(ExportCompression compression) {
  return compression == ExportCompression::kZstd ? ".jsonl.zst" : ".jsonl";
}

absl::CivilDay ExportDayOf(absl::Time time) { return absl::ToCivilDay(time, absl::UTCTimeZone()); }

std::string DayDirectory(absl::string_view stream, absl::CivilDay day) {
  return absl::StrFormat("stream=%s/year=%04d/month=%02d/day=%02d/", stream, day.year(),
                         day.month(), day.day());
}

std::string EventFilePrefix(absl::string_view stream, absl::CivilDay day, uint64_t first) {
  return absl::StrCat(DayDirectory(stream, day), stream, "-", Padded(first), "-");
}

std::string EventFileName(absl::string_view stream, absl::CivilDay day, uint64_t first,
                          uint64_t last, ExportCompression compression) {
  return absl::StrCat(EventFilePrefix(stream, day, first), Padded(last),
                      EventFileSuffix(compression));
}

std::optional<EventFileRange> ParseEventFileName(absl::string_view name, absl::string_view stream) {
  const size_t slash = name.find_last_of('/');
  absl::string_view leaf = slash == absl::string_view::npos ? name : name.substr(slash + 1);
  if (!absl::ConsumePrefix(&leaf, stream) || !absl::ConsumePrefix(&leaf, "-")) return std::nullopt;
  EventFileRange range;
  if (absl::ConsumeSuffix(&leaf, EventFileSuffix(ExportCompression::kZstd))) {
    range.compression = ExportCompression::kZstd;
  } else if (!absl::ConsumeSuffix(&leaf, EventFileSuffix(ExportCompression::kNone))) {
    return std::nullopt;
  }
  constexpr size_t kDigits = 20;
  if (leaf.size() != 2 * kDigits + 1 || leaf[kDigits] != '-') return std::nullopt;
  if (!absl::SimpleAtoi(leaf.substr(0, kDigits), &range.first) ||
      !absl::SimpleAtoi(leaf.substr(kDigits + 1), &range.last) || range.first > range.last) {
    return std::nullopt;
  }
  return range;
}

std::string GapFileName(absl::string_view stream, uint64_t from, uint64_t to) {
  return absl::StrCat("_gaps/stream=", stream, "/", stream, "-", Padded(from), "-", Padded(to),
                      ".json");
}

}  // namespace keel::lakehouse
