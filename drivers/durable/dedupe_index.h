// The durable driver's idempotency index, kept in the StateStore so that a
// key seen before a restart is still recognised after it
// (rfcs/0003-durable-layout.md):
//
//   "I" <stream> 0x00 <key>                    -> sequence:u64be expires:i64be
//                                                 id check:u32be
//   "J" <expires:u64be> <stream> 0x00 <key>    -> ""   (expiry order)
//
// A key's records are written in the same batch as its event, so an
// acknowledged event is never without its key. A lookup treats a record
// whose expiry has passed as absent, so the window edge does not depend on
// when collection runs. Collection walks "J" in expiry order and deletes an
// "I" record only when it still carries that expiry (a key may have been
// published again, with a later expiry, after the old one expired).
//
// Thread safety: the functions that stage writes or collect must run on the
// driver's single committer; lookups may run anywhere.
#ifndef KEEL_DRIVERS_DURABLE_DEDUPE_INDEX_H_
#define KEEL_DRIVERS_DURABLE_DEDUPE_INDEX_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/core/append_plan.h"
#include "keel/statestore/state_store.h"

namespace keel::durable {

std::string DedupeKey(absl::string_view stream, absl::string_view key);

// The live record of `key` on `stream` at `now`; kDataLoss naming the record
// when it does not decode.
absl::StatusOr<std::optional<DedupeHit>> LookupDedupe(StateStore& store, absl::string_view stream,
                                                      absl::string_view key, absl::Time now);

// Adds `key`'s records to `batch`.
void StageDedupe(WriteBatch& batch, absl::string_view stream, absl::string_view key,
                 const DedupeHit& hit, absl::Time expires);

// Stages the deletion of `key`'s record if it names `sequence`: the entry
// there is being dropped (recovery.h), and a retry of the key must not be
// answered with it. Its expiry record is left to collection.
absl::Status StageForgetKey(StateStore& store, WriteBatch& batch, absl::string_view stream,
                            absl::string_view key, uint64_t sequence);

// Stages the deletion of up to `budget` of `stream`'s key records that name
// a sequence up to `sequence` (a deleted incarnation's); returns how many.
// Their expiry records are left to collection.
absl::StatusOr<size_t> StageForgetKeysThrough(StateStore& store, WriteBatch& batch,
                                              absl::string_view stream, uint64_t sequence,
                                              size_t budget);

struct DedupeCollection {
  size_t collected = 0;
  // Expiry of the next key still in the index (InfiniteFuture when none).
  absl::Time next_expiry = absl::InfiniteFuture();
};

// Stages the deletion of up to `budget` keys that expired at or before `now`.
absl::StatusOr<DedupeCollection> CollectExpiredKeys(StateStore& store, WriteBatch& batch,
                                                    absl::Time now, size_t budget);

// The earliest expiry in the index (InfiniteFuture when empty).
absl::StatusOr<absl::Time> FirstExpiry(StateStore& store);

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_DEDUPE_INDEX_H_
