#include "keel/drivers/durable/dedupe_index.h"

#include "absl/strings/str_cat.h"
#include "keel/core/fnv.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/durable/key_layout.h"

namespace keel::durable {
namespace {

constexpr char kDedupePrefix = 'I';
constexpr char kExpiryPrefix = 'J';
constexpr size_t kFixedSize = 8 + 8 + 4;

// Expiry times as order-preserving unsigned integers.
uint64_t TimeKey(absl::Time t) {
  return static_cast<uint64_t>(absl::ToUnixNanos(t)) ^ (uint64_t{1} << 63);
}
absl::Time TimeOfKey(uint64_t v) {
  return absl::FromUnixNanos(static_cast<int64_t>(v ^ (uint64_t{1} << 63)));
}

std::string StreamAndKey(absl::string_view stream, absl::string_view key) {
  return absl::StrCat(stream, absl::string_view("\0", 1), key);
}

std::string ExpiryKey(absl::Time expires, absl::string_view stream_and_key) {
  std::string out(1, kExpiryPrefix);
  AppendBigEndian64(out, TimeKey(expires));
  out.append(stream_and_key.data(), stream_and_key.size());
  return out;
}

std::string EncodeRecord(const DedupeHit& hit, absl::Time expires) {
  std::string out;
  AppendBigEndian64(out, hit.sequence);
  AppendBigEndian64(out, TimeKey(expires));
  out += hit.id;
  const uint32_t check = Fnv1a32(out);
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(check >> shift));
  return out;
}

struct Record {
  DedupeHit hit;
  absl::Time expires;
};

absl::StatusOr<Record> DecodeRecord(absl::string_view key, absl::string_view value) {
  const uint32_t check = value.size() < kFixedSize ? 0 : [&] {
    absl::string_view tail = value.substr(value.size() - 4);
    uint32_t v = 0;
    for (char c : tail) v = (v << 8) | static_cast<uint8_t>(c);
    return v;
  }();
  if (value.size() < kFixedSize || check != Fnv1a32(value.substr(0, value.size() - 4))) {
    return absl::DataLossError(
        absl::StrCat("key ", PrintableKey(key), ": idempotency record fails its checksum"));
  }
  Record record;
  record.hit.sequence = DecodeBigEndian64(value);
  record.expires = TimeOfKey(DecodeBigEndian64(value.substr(8)));
  record.hit.id = std::string(value.substr(16, value.size() - kFixedSize));
  return record;
}

}  // namespace

std::string DedupeKey(absl::string_view stream, absl::string_view key) {
  return absl::StrCat(std::string(1, kDedupePrefix), StreamAndKey(stream, key));
}

absl::StatusOr<std::optional<DedupeHit>> LookupDedupe(StateStore& store, absl::string_view stream,
                                                      absl::string_view key, absl::Time now) {
  const std::string record_key = DedupeKey(stream, key);
  absl::StatusOr<std::string> value = store.Get(record_key);
  if (value.status().code() == absl::StatusCode::kNotFound) return std::nullopt;
  if (!value.ok()) return value.status();
  KEEL_ASSIGN_OR_RETURN(Record record, DecodeRecord(record_key, *value));
  if (record.expires <= now) return std::nullopt;
  return record.hit;
}

void StageDedupe(WriteBatch& batch, absl::string_view stream, absl::string_view key,
                 const DedupeHit& hit, absl::Time expires) {
  const std::string stream_and_key = StreamAndKey(stream, key);
  batch.Put(absl::StrCat(std::string(1, kDedupePrefix), stream_and_key),
            EncodeRecord(hit, expires));
  batch.Put(ExpiryKey(expires, stream_and_key), "");
}

absl::Status StageForgetKey(StateStore& store, WriteBatch& batch, absl::string_view stream,
                            absl::string_view key, uint64_t sequence) {
  const std::string record_key = DedupeKey(stream, key);
  absl::StatusOr<std::string> value = store.Get(record_key);
  if (value.status().code() == absl::StatusCode::kNotFound) return absl::OkStatus();
  if (!value.ok()) return value.status();
  KEEL_ASSIGN_OR_RETURN(Record record, DecodeRecord(record_key, *value));
  if (record.hit.sequence == sequence) batch.Delete(record_key);
  return absl::OkStatus();
}

absl::StatusOr<size_t> StageForgetKeysThrough(StateStore& store, WriteBatch& batch,
                                              absl::string_view stream, uint64_t sequence,
                                              size_t budget) {
  const KeyRange range = KeyRange::Prefix(DedupeKey(stream, ""));
  std::unique_ptr<StoreIterator> it = store.NewIterator(range);
  size_t forgotten = 0;
  for (it->Seek(range.start); it->Valid() && forgotten < budget; it->Next()) {
    KEEL_ASSIGN_OR_RETURN(Record record, DecodeRecord(it->key(), it->value()));
    if (record.hit.sequence > sequence) continue;
    batch.Delete(it->key());
    ++forgotten;
  }
  KEEL_RETURN_IF_ERROR(it->status());
  return forgotten;
}

absl::StatusOr<DedupeCollection> CollectExpiredKeys(StateStore& store, WriteBatch& batch,
                                                    absl::Time now, size_t budget) {
  DedupeCollection result;
  const KeyRange range = KeyRange::Prefix(std::string(1, kExpiryPrefix));
  std::unique_ptr<StoreIterator> it = store.NewIterator(range);
  for (it->Seek(range.start); it->Valid(); it->Next()) {
    const absl::string_view key = it->key();
    if (key.size() < 9) return absl::DataLossError("malformed idempotency expiry key");
    const absl::Time expires = TimeOfKey(DecodeBigEndian64(key.substr(1)));
    if (expires > now || result.collected == budget) {
      result.next_expiry = expires;
      break;
    }
    const std::string record_key = absl::StrCat(std::string(1, kDedupePrefix), key.substr(9));
    absl::StatusOr<std::string> value = store.Get(record_key);
    if (value.ok()) {
      KEEL_ASSIGN_OR_RETURN(Record record, DecodeRecord(record_key, *value));
      if (record.expires == expires) batch.Delete(record_key);
    } else if (value.status().code() != absl::StatusCode::kNotFound) {
      return value.status();
    }
    batch.Delete(key);
    ++result.collected;
  }
  KEEL_RETURN_IF_ERROR(it->status());
  return result;
}

absl::StatusOr<absl::Time> FirstExpiry(StateStore& store) {
  const KeyRange range = KeyRange::Prefix(std::string(1, kExpiryPrefix));
  std::unique_ptr<StoreIterator> it = store.NewIterator(range);
  it->Seek(range.start);
  if (it->Valid() && it->key().size() >= 9)
    return TimeOfKey(DecodeBigEndian64(it->key().substr(1)));
  KEEL_RETURN_IF_ERROR(it->status());
  return absl::InfiniteFuture();
}

}  // namespace keel::durable
