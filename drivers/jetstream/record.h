// Record: how Keel stores a stream in JetStream. Each JetStream message on
// a stream's subject is one record: the events of one append (a batch
// stays one message, so it is stored all or nothing), or, with no events,
// a trim marker that moves the stream's first retained sequence.
//
// A record's headers carry the stream's whole state as of that record, so
// the subject's last message alone answers a stream's bounds:
//
//   Keel-Seq          sequence of the record's first event (a marker: the
//                     stream's next sequence)
//   Keel-Count        events in the record (0 for a marker)
//   Keel-Bytes        Event::ApproximateSize of every event ever appended to
//                     the stream, through this record
//   Keel-First        the stream's first retained sequence
//   Keel-First-Bytes  Keel-Bytes of the events before Keel-First
//   Keel-First-Time   publish time of event Keel-First (unix ns; absent
//                     when nothing is retained)
//   Keel-Time         publish time of the stream's newest event (unix ns)
//   Keel-Keyed        events of the record that carry an idempotency key
//   Keel-Claim        a random id of the append that wrote the record, by
//                     which a writer recognises its own record after an
//                     unknown outcome
//
// The data is the events, each as a 4-byte little-endian length and its
// envelope without stream and sequence (AppendEncodedEventBody).
//
// Thread safety: value types and pure functions.
#ifndef KEEL_DRIVERS_JETSTREAM_RECORD_H_
#define KEEL_DRIVERS_JETSTREAM_RECORD_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "keel/core/event.h"
#include "keel/core/stream_log.h"
#include "keel/drivers/jetstream/nats_client.h"

namespace keel::jetstream {

// The header naming the append that wrote a record (see above).
inline constexpr char kClaimHeader[] = "Keel-Claim";

struct RecordHeader {
  uint64_t seq = 1;
  uint64_t count = 0;
  uint64_t total_bytes = 0;
  uint64_t first = 1;
  uint64_t first_bytes = 0;
  absl::Time first_time = absl::InfinitePast();
  absl::Time last_time = absl::InfinitePast();
  uint64_t keyed = 0;
  std::string claim;

  uint64_t next() const { return seq + count; }
  // The stream's bounds as of this record.
  LogBounds bounds() const;
};

// kDataLoss naming `where` when the headers are not a valid Keel record.
absl::StatusOr<RecordHeader> ParseRecordHeader(const NatsHeaders& headers, absl::string_view where);
void AppendRecordHeaders(const RecordHeader& header, NatsHeaders& headers);

// The header of the record that appends `events` (sequences and times set,
// ApproximateSize counted with the stream name) after the record `previous`.
RecordHeader AppendedHeader(const RecordHeader& previous, absl::Span<const Event> events);

std::string EncodeRecordEvents(absl::Span<const Event> events);
// Decodes the record's events with sequences in [from, to], in order, into
// `slot()`, calling `take()` after each (which returns false to stop). Each
// event gets `stream` and its sequence. Returns whether the reader wants
// more (take never said stop). kDataLoss when the data does not hold
// exactly header.count events.
absl::StatusOr<bool> DecodeRecordEvents(absl::string_view data, const RecordHeader& header,
                                        absl::string_view stream, uint64_t from, uint64_t to,
                                        const std::function<Event&()>& slot,
                                        const std::function<bool()>& take);

}  // namespace keel::jetstream

#endif  // KEEL_DRIVERS_JETSTREAM_RECORD_H_
