#include "keel/core/group_record.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "keel/core/fnv.h"

namespace keel {
namespace {

constexpr absl::string_view kVersion = "g2";
constexpr absl::string_view kVersionWithoutEpoch = "g1";
constexpr absl::string_view kKeyPrefix = "group/";
// Numbers after the version: the epoch (g2 only), then six.
constexpr size_t kNumbers = 6;

// Decimal digits only: SimpleAtoi alone would accept "+5" or " 5".
bool ParseDecimal(absl::string_view text, uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return absl::SimpleAtoi(text, out);
}

absl::Status Corrupt(absl::string_view text, absl::string_view why) {
  return absl::DataLossError(
      absl::StrCat("consumer-group record '", text.substr(0, 120), "' ", why));
}

}  // namespace

void GroupRecord::EndLease() {
  lease_token = 0;
  lease_expires = absl::UnixEpoch();
  lease_from = 0;
  lease_to = 0;
}

std::string GroupRecord::Encode() const {
  const std::string body =
      absl::StrCat(kVersion, " ", epoch, " ", committed, " ", last_token, " ", lease_token, " ",
                   absl::ToUnixNanos(lease_expires), " ", lease_from, " ", lease_to);
  return absl::StrCat(body, " ", absl::StrFormat("%08x", Fnv1a32(body)));
}

absl::StatusOr<GroupRecord> GroupRecord::Decode(absl::string_view text) {
  const size_t last_space = text.rfind(' ');
  if (last_space == absl::string_view::npos) return Corrupt(text, "has no checksum");
  const absl::string_view body = text.substr(0, last_space);
  if (text.substr(last_space + 1) != absl::StrFormat("%08x", Fnv1a32(body))) {
    return Corrupt(text, "fails its checksum");
  }
  std::vector<absl::string_view> fields = absl::StrSplit(body, ' ');
  const bool has_epoch = fields[0] == kVersion;
  if ((!has_epoch && fields[0] != kVersionWithoutEpoch) ||
      fields.size() != 1 + kNumbers + (has_epoch ? 1 : 0)) {
    return Corrupt(text, "has an unknown version or field count");
  }
  GroupRecord record;
  if (has_epoch && !ParseDecimal(fields[1], &record.epoch)) {
    return Corrupt(text, "has a bad number");
  }
  uint64_t values[kNumbers];
  for (size_t i = 0; i < kNumbers; ++i) {
    // The expiry is signed nanoseconds but never negative once written.
    if (!ParseDecimal(fields[fields.size() - kNumbers + i], &values[i])) {
      return Corrupt(text, "has a bad number");
    }
  }
  record.committed = values[0];
  record.last_token = values[1];
  record.lease_token = values[2];
  record.lease_expires = absl::FromUnixNanos(static_cast<int64_t>(values[3]));
  record.lease_from = values[4];
  record.lease_to = values[5];
  if (record.lease_token > record.last_token) return Corrupt(text, "has a lease from the future");
  return record;
}

std::string GroupKey(absl::string_view stream, absl::string_view group) {
  if (stream.empty()) return std::string(kKeyPrefix);
  return absl::StrCat(kKeyPrefix, stream, "/", group);
}

bool ParseGroupKey(absl::string_view key, std::string* stream, std::string* group) {
  if (!absl::ConsumePrefix(&key, kKeyPrefix)) return false;
  const size_t slash = key.find('/');
  if (slash == absl::string_view::npos || slash == 0 || slash + 1 == key.size()) return false;
  *stream = std::string(key.substr(0, slash));
  *group = std::string(key.substr(slash + 1));
  return true;
}

}  // namespace keel
