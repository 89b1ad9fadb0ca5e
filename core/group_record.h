// GroupRecord: the persisted state of one consumer group of one stream, and
// its text form in the bus's MetadataStore (key "group/<stream>/<group>";
// rfcs/0005-consumer-groups.md).
//
// The text form is one line of space-separated fields with a checksum:
//
//   g2 <epoch> <committed> <last_token> <lease_token> <lease_expires_unix_ns>
//      <lease_from> <lease_to> <fnv32 hex of everything before this field>
//
// Records of version g1, written before stores had more than one epoch,
// have no epoch field and read as epoch 0.
//
// Parsing is strict (exact field count, decimal digits only, checksum), so a
// torn or hand-edited record is reported as data loss instead of being read
// as some other cursor or token.
//
// Thread safety: a plain value type; functions are pure.
#ifndef KEEL_CORE_GROUP_RECORD_H_
#define KEEL_CORE_GROUP_RECORD_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace keel {

struct GroupRecord {
  // The store epoch its sequences belong to (rfcs/0003-durable-layout.md,
  // "Epochs"); 0 when written before epochs, i.e. in the store's first.
  uint64_t epoch = 0;
  uint64_t committed = 0;   // Sequence the group has read through.
  uint64_t last_token = 0;  // Newest token granted or fenced (Seek).
  // The outstanding lease; lease_token 0 when none (committed or fenced).
  uint64_t lease_token = 0;
  absl::Time lease_expires = absl::UnixEpoch();
  uint64_t lease_from = 0;  // `committed` when the lease was granted.
  uint64_t lease_to = 0;    // Last sequence of the leased page.

  bool HasLease() const { return lease_token != 0; }
  // A lease that has not ended and not expired at `now`.
  bool LeaseLive(absl::Time now) const { return HasLease() && now < lease_expires; }
  void EndLease();

  std::string Encode() const;
  // kDataLoss when `text` is not a record this version wrote.
  static absl::StatusOr<GroupRecord> Decode(absl::string_view text);

  friend bool operator==(const GroupRecord&, const GroupRecord&) = default;
};

// "group/<stream>/<group>"; with an empty group, the prefix of a stream's
// groups; with both empty, of every group. Stream and group names contain no
// '/', so a key splits back unambiguously.
std::string GroupKey(absl::string_view stream, absl::string_view group);

// Splits a key made by GroupKey; false when it is not one.
bool ParseGroupKey(absl::string_view key, std::string* stream, std::string* group);

}  // namespace keel

#endif  // KEEL_CORE_GROUP_RECORD_H_
