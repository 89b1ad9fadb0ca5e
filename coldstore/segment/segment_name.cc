#include <cinttypes>
#include <cstdio>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "keel/coldstore/segment/segment.h"
#include "keel/core/errors.h"
#include "keel/core/fnv.h"
#include "keel/drivers/durable/crc32c.h"

namespace keel {

std::string SegmentObjectPrefix(absl::string_view stream) {
  return absl::StrCat("stream=", stream, "/");
}

std::string SegmentObjectName(absl::string_view stream, uint64_t first, uint64_t last,
                              uint32_t checksum) {
  return absl::StrFormat("%s%020d-%020d-%08x.seg", SegmentObjectPrefix(stream), first, last,
                         checksum);
}

absl::StatusOr<SegmentName> ParseSegmentObjectName(absl::string_view name) {
  auto bad = [&] {
    return InvalidArgument(absl::StrCat("'", name, "' is not a cold segment's name"));
  };
  if (!absl::StartsWith(name, "stream=") || !absl::EndsWith(name, ".seg")) return bad();
  const size_t slash = name.rfind('/');
  if (slash == absl::string_view::npos || slash <= 7) return bad();
  SegmentName parsed;
  parsed.stream = std::string(name.substr(7, slash - 7));
  absl::string_view leaf = name.substr(slash + 1);
  leaf.remove_suffix(4);
  std::vector<absl::string_view> parts = absl::StrSplit(leaf, '-');
  if (parts.size() != 3 || parts[0].size() != 20 || parts[1].size() != 20 || parts[2].size() != 8 ||
      !absl::SimpleAtoi(parts[0], &parsed.first) || !absl::SimpleAtoi(parts[1], &parsed.last) ||
      !absl::SimpleHexAtoi(parts[2], &parsed.checksum) || parsed.first > parsed.last) {
    return bad();
  }
  if (SegmentObjectName(parsed.stream, parsed.first, parsed.last, parsed.checksum) != name) {
    return bad();
  }
  return parsed;
}

bool EntryValueChecks(EntryCheck check, absl::string_view value) {
  if (value.size() < 4) return false;
  uint32_t stored = 0;
  for (size_t i = 0; i < 4; ++i) stored = (stored << 8) | static_cast<uint8_t>(value[i]);
  const absl::string_view envelope = value.substr(4);
  switch (check) {
    case EntryCheck::kFnv1a:
      return stored == Fnv1a32(envelope);
    case EntryCheck::kCrc32c:
      return stored == durable::Crc32c(envelope);
  }
  return false;
}

}  // namespace keel
