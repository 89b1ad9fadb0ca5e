// Durable driver key layout (rfcs/0003-durable-layout.md).
//
// Keys (bytewise ordered; stream names never contain 0x00):
//   "M"                              store meta   (one per store)
//   "O"                              open marker  (while a process has the store open)
//   "H" <stream>                     stream head  (one per stream, mutable)
//   "P" <stream> 0x00 <epoch:u64be>  epoch start  (one per stream and later epoch, immutable)
//   "E" <stream> 0x00 <seq:u64be>    entry        (one per event, immutable)
//   "N" <stream>                     incarnation  (a stream deleted at least once)
//
// Values:
//   meta  = version:u8(=1|2) epoch:u64be earlier_epoch:u64be* check:u32be
//     (earlier epochs oldest first; none in a store that never found an
//     unsynced crash, which is the record Keel wrote before epochs existed)
//   epoch start = version:u8(=1) first:u64be check:u32be
//   incarnation = version:u8(=1) start:u64be check:u32be
//     (start: the `next` the stream had when it was last deleted; its
//     entries up to start are a deleted incarnation's, see LogBounds)
//   open marker = version:u8(=2) acks_synced:u8(0|1) lost:u8(0|1) lifetime_size:u8
//                 lifetime check:u32be
//     (version 1, written before lifetimes, has neither lifetime field)
//   head  = version:u8(=1) first:u64be next:u64be bytes:u64be
//           oldest_time_unix_nanos:i64be check:u32be
//   entry = check:u32be envelope
//     where envelope is keel.v1.Event (core/proto/event.proto) with stream and
//     sequence left unset (they are in the key).
//   check = 32-bit FNV-1a of the bytes before it (meta, head); for an entry,
//     of the envelope: FNV-1a in version-1 stores, CRC32C in version-2 stores
//     (the meta record's version). Any decode failure is reported with the key, so a
//     corrupt store fails loudly instead of restarting a counter at 0.
//
// A publish writes every entry of its batch and the stream's new head in one
// atomic WriteBatch; the head update is O(1) per publish.
#include "keel/drivers/durable/key_layout.h"

#include "absl/algorithm/container.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "keel/core/event_codec.h"
#include "keel/core/fnv.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/durable/crc32c.h"

namespace keel::durable {
namespace {

constexpr char kMetaPrefix = 'M';
constexpr char kOpenMarkerKey = 'O';
constexpr uint8_t kOpenMarkerVersion = 2;
constexpr uint8_t kOpenMarkerVersionWithoutLifetime = 1;
constexpr size_t kOpenMarkerSize = 1 + 1 + 1 + 1 + 4;  // Without the lifetime's bytes.
constexpr size_t kOpenMarkerSizeWithoutLifetime = 1 + 1 + 4;
constexpr char kHeadPrefix = 'H';
constexpr char kEntryPrefix = 'E';
constexpr uint8_t kHeadVersion = 1;
constexpr size_t kMetaSize = 1 + 8 + 4;  // Without earlier epochs (8 bytes each).
constexpr char kEpochStartPrefix = 'P';
constexpr uint8_t kEpochStartVersion = 1;
constexpr size_t kSequenceRecordSize = 1 + 8 + 4;  // Epoch start, incarnation.
constexpr char kIncarnationPrefix = 'N';
constexpr uint8_t kIncarnationVersion = 1;
constexpr size_t kHeadSize = 1 + 8 * 4 + 4;

uint32_t Checksum(absl::string_view bytes) { return Fnv1a32(bytes); }

// <prefix> <stream> 0x00 <number:u64be>: the shape of entry and epoch-start
// keys.
std::string StreamNumberKey(char prefix, absl::string_view stream, uint64_t number) {
  std::string key;
  key.reserve(stream.size() + 10);
  key.push_back(prefix);
  key.append(stream.data(), stream.size());
  key.push_back('\0');
  AppendBigEndian64(key, number);
  return key;
}

bool IsStreamNumberKey(char prefix, absl::string_view key) {
  return key.size() >= 10 && key[0] == prefix && key[key.size() - 9] == '\0';
}

uint32_t EntryChecksum(absl::string_view envelope, StoreFormat format) {
  return format == StoreFormat::kCrc32c ? Crc32c(envelope) : Fnv1a32(envelope);
}

bool KnownStoreFormat(uint8_t version) {
  return version == static_cast<uint8_t>(StoreFormat::kFnv1a) ||
         version == static_cast<uint8_t>(StoreFormat::kCrc32c);
}

void AppendU32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<char>(v >> shift));
}

uint32_t ReadU32(absl::string_view in) {
  return (uint32_t{static_cast<uint8_t>(in[0])} << 24) |
         (uint32_t{static_cast<uint8_t>(in[1])} << 16) |
         (uint32_t{static_cast<uint8_t>(in[2])} << 8) | uint32_t{static_cast<uint8_t>(in[3])};
}

void Seal(std::string& record) { AppendU32(record, Checksum(record)); }

// Checks size, version and checksum of a record of `size` bytes, or (with
// `repeat`) of `size` plus any number of `repeat`-byte items.
absl::Status Unseal(absl::string_view what, absl::string_view value, size_t size,
                    bool (*known_version)(uint8_t), size_t repeat = 0) {
  const bool size_ok = repeat == 0 ? value.size() == size
                                   : value.size() >= size && (value.size() - size) % repeat == 0;
  if (!size_ok) {
    return absl::DataLossError(absl::StrCat(what, " record has ", value.size(), " bytes; expected ",
                                            size,
                                            repeat == 0 ? "" : absl::StrCat(" + ", repeat, "n")));
  }
  if (!known_version(static_cast<uint8_t>(value[0]))) {
    return absl::DataLossError(absl::StrCat(what, " record has unknown format version ",
                                            static_cast<uint8_t>(value[0]),
                                            " (written by a newer Keel?)"));
  }
  if (ReadU32(value.substr(value.size() - 4)) != Checksum(value.substr(0, value.size() - 4))) {
    return absl::DataLossError(absl::StrCat(what, " record fails its checksum"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string MetaKey() { return std::string(1, kMetaPrefix); }

std::string OpenMarkerKey() { return std::string(1, kOpenMarkerKey); }

std::string HeadKey(absl::string_view stream) { return absl::StrCat("H", stream); }

KeyRange HeadRange() { return KeyRange::Prefix(std::string(1, kHeadPrefix)); }

absl::string_view StreamOfHeadKey(absl::string_view key) { return key.substr(1); }

std::string EpochStartKey(absl::string_view stream, uint64_t epoch) {
  return StreamNumberKey(kEpochStartPrefix, stream, epoch);
}

std::string IncarnationKey(absl::string_view stream) {
  return absl::StrCat(absl::string_view(&kIncarnationPrefix, 1), stream);
}

KeyRange IncarnationRange() { return KeyRange::Prefix(std::string(1, kIncarnationPrefix)); }

absl::string_view StreamOfIncarnationKey(absl::string_view key) { return key.substr(1); }

KeyRange EpochStartRange() { return KeyRange::Prefix(std::string(1, kEpochStartPrefix)); }

absl::StatusOr<std::pair<absl::string_view, uint64_t>> ParseEpochStartKey(absl::string_view key) {
  if (!IsStreamNumberKey(kEpochStartPrefix, key) || key.size() < 11) {  // A stream name.
    return absl::DataLossError(absl::StrCat("malformed epoch start key ", PrintableKey(key)));
  }
  return std::make_pair(key.substr(1, key.size() - 10),
                        DecodeBigEndian64(key.substr(key.size() - 8)));
}

KeyRange EntryRange(absl::string_view stream) {
  return KeyRange::Prefix(absl::StrCat("E", stream, absl::string_view("\0", 1)));
}

std::string EntryKey(absl::string_view stream, uint64_t sequence) {
  return StreamNumberKey(kEntryPrefix, stream, sequence);
}

absl::StatusOr<uint64_t> EntrySequence(absl::string_view key) {
  if (!IsStreamNumberKey(kEntryPrefix, key)) {
    return absl::DataLossError(absl::StrCat("malformed entry key ", PrintableKey(key)));
  }
  return DecodeBigEndian64(key.substr(key.size() - 8));
}

bool StoreMeta::Had(uint64_t e) const {
  return e == epoch || absl::c_linear_search(earlier_epochs, e);
}

std::string EncodeMeta(const StoreMeta& meta) {
  std::string out(1, static_cast<char>(meta.format));
  AppendBigEndian64(out, meta.epoch);
  for (uint64_t earlier : meta.earlier_epochs) AppendBigEndian64(out, earlier);
  Seal(out);
  return out;
}

absl::StatusOr<StoreMeta> DecodeMeta(absl::string_view value) {
  KEEL_RETURN_IF_ERROR(Unseal("store meta", value, kMetaSize, KnownStoreFormat, 8));
  StoreMeta meta;
  meta.epoch = DecodeBigEndian64(value.substr(1));
  meta.format = static_cast<StoreFormat>(value[0]);
  for (size_t at = 9; at + 4 < value.size(); at += 8) {
    const uint64_t earlier = DecodeBigEndian64(value.substr(at));
    if (earlier == 0 || meta.Had(earlier)) {
      return absl::DataLossError(absl::StrCat("store meta record repeats epoch ", earlier));
    }
    meta.earlier_epochs.push_back(earlier);
  }
  return meta;
}

namespace {

// Epoch starts and incarnations: a version byte and one sequence, sealed.
std::string EncodeSequenceRecord(uint8_t version, uint64_t sequence) {
  std::string out(1, static_cast<char>(version));
  AppendBigEndian64(out, sequence);
  Seal(out);
  return out;
}

absl::StatusOr<uint64_t> DecodeSequenceRecord(absl::string_view what,
                                              bool (*known_version)(uint8_t),
                                              absl::string_view value) {
  KEEL_RETURN_IF_ERROR(Unseal(what, value, kSequenceRecordSize, known_version));
  const uint64_t sequence = DecodeBigEndian64(value.substr(1));
  if (sequence == 0) return absl::DataLossError(absl::StrCat(what, " record names sequence 0"));
  return sequence;
}

}  // namespace

std::string EncodeEpochStart(uint64_t first) {
  return EncodeSequenceRecord(kEpochStartVersion, first);
}

absl::StatusOr<uint64_t> DecodeEpochStart(absl::string_view value) {
  return DecodeSequenceRecord(
      "epoch start", [](uint8_t version) { return version == kEpochStartVersion; }, value);
}

std::string EncodeIncarnation(uint64_t start) {
  return EncodeSequenceRecord(kIncarnationVersion, start);
}

absl::StatusOr<uint64_t> DecodeIncarnation(absl::string_view value) {
  return DecodeSequenceRecord(
      "incarnation", [](uint8_t version) { return version == kIncarnationVersion; }, value);
}

std::string EncodeOpenMarker(const OpenMarker& marker) {
  // A lifetime too long for its size byte is written as unknown: the next
  // open then assumes the worst, as StateStore says of such a lifetime.
  absl::string_view lifetime = marker.lifetime;
  if (lifetime.size() > StateStore::kMaxLifetimeBytes) lifetime = "";
  std::string out(1, static_cast<char>(kOpenMarkerVersion));
  out.push_back(marker.acks_synced ? 1 : 0);
  out.push_back(marker.lost ? 1 : 0);
  out.push_back(static_cast<char>(lifetime.size()));
  out.append(lifetime.data(), lifetime.size());
  Seal(out);
  return out;
}

absl::StatusOr<OpenMarker> DecodeOpenMarker(absl::string_view value) {
  // Version 1 has neither `lost` nor a lifetime; version 2 gives the
  // lifetime's size in its fourth byte.
  const bool version_1 =
      !value.empty() && static_cast<uint8_t>(value[0]) == kOpenMarkerVersionWithoutLifetime;
  const size_t lifetime_size = !version_1 && value.size() > 3 ? static_cast<uint8_t>(value[3]) : 0;
  const size_t size = version_1 ? kOpenMarkerSizeWithoutLifetime : kOpenMarkerSize + lifetime_size;
  KEEL_RETURN_IF_ERROR(Unseal("open marker", value, size, [](uint8_t version) {
    return version == kOpenMarkerVersion || version == kOpenMarkerVersionWithoutLifetime;
  }));
  OpenMarker marker{.acks_synced = value[1] != 0};
  if (version_1) return marker;
  marker.lost = value[2] != 0;
  marker.lifetime = std::string(value.substr(4, lifetime_size));
  return marker;
}

std::string EncodeHead(const Head& head) {
  std::string out(1, static_cast<char>(kHeadVersion));
  AppendBigEndian64(out, head.first);
  AppendBigEndian64(out, head.next);
  AppendBigEndian64(out, head.bytes);
  AppendBigEndian64(out, static_cast<uint64_t>(absl::ToUnixNanos(head.oldest_time)));
  Seal(out);
  return out;
}

absl::StatusOr<Head> DecodeHead(absl::string_view value) {
  absl::Status status =
      Unseal("head", value, kHeadSize, [](uint8_t version) { return version == kHeadVersion; });
  if (!status.ok()) return status;
  Head head;
  head.first = DecodeBigEndian64(value.substr(1));
  head.next = DecodeBigEndian64(value.substr(9));
  head.bytes = DecodeBigEndian64(value.substr(17));
  head.oldest_time = absl::FromUnixNanos(static_cast<int64_t>(DecodeBigEndian64(value.substr(25))));
  if (head.first == 0 || head.next < head.first) {
    return absl::DataLossError(
        absl::StrCat("head record has impossible bounds first=", head.first, " next=", head.next));
  }
  return head;
}

std::string EncodeEntry(const Event& event, StoreFormat format) {
  std::string out(4, '\0');  // Checksum placeholder.
  AppendEncodedEventBody(event, out);
  uint32_t check = EntryChecksum(absl::string_view(out).substr(4), format);
  for (int i = 0; i < 4; ++i) out[i] = static_cast<char>(check >> (24 - 8 * i));
  return out;
}

absl::Status DecodeEntryInto(absl::string_view stream, uint64_t sequence, absl::string_view value,
                             StoreFormat format, Event& event) {
  if (value.size() < 4 || ReadU32(value) != EntryChecksum(value.substr(4), format)) {
    return absl::DataLossError("entry record fails its checksum");
  }
  KEEL_RETURN_IF_ERROR(DecodeEventInto(value.substr(4), event));
  event.stream.assign(stream.data(), stream.size());
  event.sequence = sequence;
  return absl::OkStatus();
}

absl::StatusOr<Event> DecodeEntry(absl::string_view stream, uint64_t sequence,
                                  absl::string_view value, StoreFormat format) {
  Event event;
  KEEL_RETURN_IF_ERROR(DecodeEntryInto(stream, sequence, value, format, event));
  return event;
}

std::string PrintableKey(absl::string_view key) {
  std::string out;
  for (size_t i = 0; i < key.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(key[i]);
    if ((key[0] == kEntryPrefix || key[0] == kEpochStartPrefix) && i + 9 == key.size()) {
      // Entry and epoch-start keys end in 0x00 + u64be: print it as a number.
      absl::StrAppend(&out, "/", DecodeBigEndian64(key.substr(i + 1)));
      break;
    }
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
    } else {
      absl::StrAppend(&out, "\\x", absl::BytesToHexString(key.substr(i, 1)));
    }
  }
  return out;
}

}  // namespace keel::durable
