// RecordReader: reads a Keel stream's records (drivers/jetstream/record.h)
// from its subject, finds the record holding a sequence, and feeds a range
// of events in order while checking that the records continue each other.
//
// Records of one subject carry increasing sequences in JetStream order, so
// "the first record whose events reach past k" is a binary search over
// JetStream sequences, each probe one "next message of the subject at or
// after J" read from the stream leader.
//
// A record that repeats or skips sequences, or one past the record the
// subject's head named, is kDataLoss: something wrote to the subject
// without Keel's conditional publish, and the stream cannot be trusted.
//
// Thread safety: all methods are safe to call concurrently.
#ifndef KEEL_DRIVERS_JETSTREAM_RECORD_READER_H_
#define KEEL_DRIVERS_JETSTREAM_RECORD_READER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/drivers/jetstream/bus_layout.h"
#include "keel/drivers/jetstream/jetstream_api.h"
#include "keel/drivers/jetstream/position_cache.h"
#include "keel/drivers/jetstream/record.h"

namespace keel::jetstream {

// A record as its stream's head names it: where it is and what it says.
struct RecordRef {
  uint64_t js_seq = 0;  // Its JetStream stream sequence; 0: the subject has no record.
  RecordHeader header;
};

// One record as stored.
struct StoredRecord {
  uint64_t js_seq = 0;  // Its JetStream stream sequence.
  RecordHeader header;
  std::string data;
  std::string msg_id;  // Its Nats-Msg-Id: the slot it claimed.

  RecordRef ref() const { return RecordRef{js_seq, header}; }
};

// The record of a stored message of `stream`'s subject.
absl::StatusOr<StoredRecord> ToRecord(StoredMessage message, absl::string_view stream);

// What ReadEvents covered.
struct EventScan {
  uint64_t scanned = 0;  // The last sequence fed (the start's predecessor when none).
  // The first sequence that was missing at the start of the range (a trim
  // since the head was read), or 0.
  uint64_t missing_start = 0;
  // The sequence at which the read stopped because the records holding it
  // were gone (a trim purged them while the read went on), or 0. The caller
  // tells a trim from damage by the stream's first sequence now.
  uint64_t missing_at = 0;
};

class RecordReader {
 public:
  RecordReader(JetStreamApi& api, const BusLayout& layout) : api_(api), layout_(layout) {}

  // The subject's newest record, or nullopt for a stream never written.
  absl::StatusOr<std::optional<StoredRecord>> Last(absl::string_view stream);
  // The first record at or after JetStream sequence `from`.
  absl::StatusOr<std::optional<StoredRecord>> NextFrom(absl::string_view stream, uint64_t from);
  // The first record satisfying `pred` (false for a prefix of the subject's
  // records, true from some record on); `tip` is a record satisfying it.
  // `range`, when given, narrows the search (PositionCache::Range).
  absl::StatusOr<StoredRecord> LowerBound(absl::string_view stream, const RecordRef& tip,
                                          const std::function<bool(const RecordHeader&)>& pred,
                                          PositionCache::Range range = {});
  // Remembers where a record of `stream` is (the reader notes every record it
  // reads itself).
  void Note(absl::string_view stream, const RecordHeader& header, uint64_t js_seq) {
    positions_.Note(stream, header.seq, js_seq);
  }
  // Feeds the events [from, to] (to <= tip's last sequence) to `slot`/`take`
  // in order until `take` returns false. A range whose start was trimmed
  // since `tip` was read starts at the oldest event still stored
  // (EventScan::missing_start says so); one whose middle was purged meanwhile
  // stops there (EventScan::missing_at). `record`, when given, holds the
  // JetStream sequence of the record being read.
  absl::StatusOr<EventScan> ReadEvents(absl::string_view stream, uint64_t from, uint64_t to,
                                       const RecordRef& tip, const std::function<Event&()>& slot,
                                       const std::function<bool()>& take,
                                       uint64_t* record = nullptr);

 private:
  // Checks that the records after `record` up to `tip` only mark trims.
  absl::Status CheckReachesTip(absl::string_view stream, const StoredRecord& record,
                               const RecordRef& tip);

  JetStreamApi& api_;
  const BusLayout& layout_;
  PositionCache positions_;
};

}  // namespace keel::jetstream

#endif  // KEEL_DRIVERS_JETSTREAM_RECORD_READER_H_
