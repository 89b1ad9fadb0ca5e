#include "keel/drivers/jetstream/jetstream_metadata.h"

#include <algorithm>
#include <atomic>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/jetstream/claim.h"
#include "keel/drivers/jetstream/record.h"

namespace keel::jetstream {
namespace {

constexpr char kDeleted[] = "Keel-Deleted";
constexpr absl::string_view kPolicyPrefix = "policy/";
// Bounds each thread's table; a caller reads and writes a record within one
// operation, long before this many other keys were read.
constexpr size_t kMaxSeen = 4096;

uint64_t NextInstance() {
  static std::atomic<uint64_t> next{1};
  return next.fetch_add(1);
}

// Per thread: the JetStream sequence of each key's record as last read.
absl::flat_hash_map<std::string, uint64_t>& SeenTable() {
  thread_local absl::flat_hash_map<std::string, uint64_t> table;
  return table;
}

std::string SeenKey(uint64_t instance, absl::string_view key) {
  return absl::StrCat(instance, "/", key);
}

}  // namespace

JetStreamMetadata::JetStreamMetadata(JetStreamApi& api, const BusLayout& layout,
                                     ClaimTimeouts timeouts)
    : api_(api), layout_(layout), timeouts_(timeouts), instance_(NextInstance()) {}

uint64_t JetStreamMetadata::Seen(absl::string_view key) const {
  const auto& table = SeenTable();
  auto it = table.find(SeenKey(instance_, key));
  return it == table.end() ? 0 : it->second;
}

void JetStreamMetadata::See(absl::string_view key, uint64_t js_seq) const {
  auto& table = SeenTable();
  if (table.size() >= kMaxSeen) table.clear();
  table[SeenKey(instance_, key)] = js_seq;
}

absl::StatusOr<std::optional<std::string>> JetStreamMetadata::Get(absl::string_view key) {
  KEEL_ASSIGN_OR_RETURN(std::optional<StoredMessage> message,
                        api_.LastBySubject(layout_.MetadataSubject(key)));
  if (!message) {
    See(key, 0);
    return std::nullopt;
  }
  See(key, message->sequence);
  if (FindHeader(message->headers, kDeleted) != nullptr) return std::nullopt;
  return std::move(message->data);
}

absl::Status JetStreamMetadata::Put(absl::string_view key, absl::string_view value) {
  return Write(key, value, /*tombstone=*/false);
}

absl::Status JetStreamMetadata::Delete(absl::string_view key) {
  return Write(key, "", /*tombstone=*/true);
}

absl::Status JetStreamMetadata::Write(absl::string_view key, absl::string_view value,
                                      bool tombstone) {
  Claim claim;
  claim.subject = layout_.MetadataSubject(key);
  claim.after = Seen(key);
  claim.id = NewClaimId();
  claim.headers.emplace_back(kClaimHeader, claim.id);
  if (tombstone) claim.headers.emplace_back(kDeleted, "1");
  claim.data = std::string(value);
  claim.rollup = true;
  KEEL_ASSIGN_OR_RETURN(ClaimOutcome outcome, PublishClaim(api_, claim, timeouts_));
  if (outcome.kind == ClaimOutcome::Kind::kStored) {
    See(key, outcome.sequence);
    return absl::OkStatus();
  }
  if (outcome.maybe_stored) {
    // An unanswered attempt may be the record that moved the key on.
    KEEL_ASSIGN_OR_RETURN(std::optional<StoredMessage> last, api_.LastBySubject(claim.subject));
    const std::string* id = last ? FindHeader(last->headers, kClaimHeader) : nullptr;
    if (id != nullptr && *id == claim.id) {
      See(key, last->sequence);
      return absl::OkStatus();
    }
  }
  See(key, 0);  // Unknown now: the caller reads again before it writes again.
  if (absl::StartsWith(key, kPolicyPrefix)) {
    return ResourceDrift(absl::StrCat("stream '", key.substr(kPolicyPrefix.size()),
                                      "' was declared by another daemon meanwhile: read its "
                                      "declaration again"));
  }
  return ConflictError(
      absl::StrCat("record '", key, "' was changed by another daemon meanwhile; try again"),
      ConflictInfo{claim.after, 0});
}

absl::StatusOr<std::vector<MetadataStore::Record>> JetStreamMetadata::List(
    absl::string_view prefix) {
  KEEL_ASSIGN_OR_RETURN(std::optional<StreamSnapshot> snapshot,
                        api_.Info(layout_.metadata_filter()));
  std::vector<std::string> keys;
  if (snapshot) {
    for (const std::string& subject : snapshot->matching_subjects) {
      std::optional<std::string> key = layout_.KeyOfMetadataSubject(subject);
      if (key && absl::StartsWith(*key, prefix)) keys.push_back(*std::move(key));
    }
  }
  std::sort(keys.begin(), keys.end());
  std::vector<Record> records;
  for (const std::string& key : keys) {
    KEEL_ASSIGN_OR_RETURN(std::optional<std::string> value, Get(key));
    if (value) records.emplace_back(key, *std::move(value));
  }
  return records;
}

}  // namespace keel::jetstream
