#include "keel/drivers/jetstream/record_reader.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "keel/core/status_macros.h"

namespace keel::jetstream {
namespace {

absl::Status Damaged(absl::string_view stream, absl::string_view what) {
  return absl::DataLossError(absl::StrCat("jetstream: stream '", stream, "': ", what));
}

}  // namespace

absl::StatusOr<StoredRecord> ToRecord(StoredMessage message, absl::string_view stream) {
  StoredRecord record;
  record.js_seq = message.sequence;
  KEEL_ASSIGN_OR_RETURN(
      record.header, ParseRecordHeader(message.headers, absl::StrCat("message ", message.sequence,
                                                                     " of stream '", stream, "'")));
  if (const std::string* id = FindHeader(message.headers, "Nats-Msg-Id")) record.msg_id = *id;
  record.data = std::move(message.data);
  return record;
}

absl::StatusOr<std::optional<StoredRecord>> RecordReader::Last(absl::string_view stream) {
  KEEL_ASSIGN_OR_RETURN(std::optional<StoredMessage> message,
                        api_.LastBySubject(layout_.EventSubject(stream)));
  if (!message) return std::nullopt;
  KEEL_ASSIGN_OR_RETURN(StoredRecord record, ToRecord(*std::move(message), stream));
  Note(stream, record.header, record.js_seq);
  return record;
}

absl::StatusOr<std::optional<StoredRecord>> RecordReader::NextFrom(absl::string_view stream,
                                                                   uint64_t from) {
  KEEL_ASSIGN_OR_RETURN(std::optional<StoredMessage> message,
                        api_.NextBySubject(layout_.EventSubject(stream), from));
  if (!message) return std::nullopt;
  KEEL_ASSIGN_OR_RETURN(StoredRecord record, ToRecord(*std::move(message), stream));
  Note(stream, record.header, record.js_seq);
  return record;
}

absl::StatusOr<StoredRecord> RecordReader::LowerBound(
    absl::string_view stream, const RecordRef& tip,
    const std::function<bool(const RecordHeader&)>& pred, PositionCache::Range range) {
  // `found` (or, while it is unset, the record at or after `found_at`)
  // satisfies pred; no record at or below `lo` does; the search looks for
  // an earlier one below `hi` (records in [hi, found) do not exist or do
  // not qualify).
  std::optional<StoredRecord> found;
  uint64_t found_at = std::min(tip.js_seq, range.at_most);
  uint64_t lo = range.after;
  uint64_t hi = found_at;
  while (lo + 1 < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    KEEL_ASSIGN_OR_RETURN(std::optional<StoredRecord> probe, NextFrom(stream, mid));
    if (!probe || probe->js_seq >= found_at) {
      hi = mid;  // Nothing between mid and the best record found.
    } else if (pred(probe->header)) {
      hi = mid;
      found_at = probe->js_seq;
      found = *std::move(probe);
    } else {
      lo = probe->js_seq;
    }
  }
  if (found) return *std::move(found);
  // The record the search started from; a later trim may have removed it,
  // then what follows.
  KEEL_ASSIGN_OR_RETURN(std::optional<StoredRecord> start, NextFrom(stream, found_at));
  if (!start) {
    return Damaged(stream, absl::StrCat("its head record, message ", tip.js_seq, ", is gone"));
  }
  return *std::move(start);
}

absl::StatusOr<EventScan> RecordReader::ReadEvents(absl::string_view stream, uint64_t from,
                                                   uint64_t to, const RecordRef& tip,
                                                   const std::function<Event&()>& slot,
                                                   const std::function<bool()>& take,
                                                   uint64_t* record_at) {
  EventScan scan;
  scan.scanned = from - 1;
  if (from > to) return scan;
  KEEL_ASSIGN_OR_RETURN(
      StoredRecord record,
      LowerBound(
          stream, tip, [from](const RecordHeader& header) { return header.next() > from; },
          positions_.Around(stream, from)));
  uint64_t expect = from;
  if (record.header.seq > from) {
    // The records holding the start were purged after `tip` was read: the
    // range starts at the oldest event still stored.
    scan.missing_start = from;
    expect = record.header.seq;
  }
  while (true) {
    const RecordHeader& header = record.header;
    if (header.seq > expect) {
      scan.missing_at = expect;
      return scan;
    }
    // Events of the first record before `from` are skipped: decoding starts
    // at `expect`, which counts every event handed out.
    if (record_at != nullptr) *record_at = record.js_seq;
    auto counting_take = [&] {
      scan.scanned = expect++;
      return take();
    };
    KEEL_ASSIGN_OR_RETURN(bool more, DecodeRecordEvents(record.data, header, stream, expect, to,
                                                        slot, counting_take));
    if (!more) return scan;
    if (expect > to) {
      if (to == tip.header.next() - 1 && record.js_seq < tip.js_seq) {
        KEEL_RETURN_IF_ERROR(CheckReachesTip(stream, record, tip));
      }
      return scan;
    }
    KEEL_ASSIGN_OR_RETURN(std::optional<StoredRecord> next, NextFrom(stream, record.js_seq + 1));
    if (!next) {
      return Damaged(
          stream, absl::StrCat("events from ", expect, " are missing: the subject ends at message ",
                               record.js_seq));
    }
    if (next->header.seq < expect) {
      return Damaged(stream, absl::StrCat("message ", next->js_seq, " repeats events from ",
                                          next->header.seq, " (expected ", expect, ")"));
    }
    record = *std::move(next);
  }
}

absl::Status RecordReader::CheckReachesTip(absl::string_view stream, const StoredRecord& record,
                                           const RecordRef& tip) {
  const uint64_t next = record.header.next();
  uint64_t at = record.js_seq;
  while (at < tip.js_seq) {
    KEEL_ASSIGN_OR_RETURN(std::optional<StoredRecord> later, NextFrom(stream, at + 1));
    if (!later || later->js_seq > tip.js_seq) break;
    if (later->header.count > 0 || later->header.seq != next) {
      return Damaged(stream, absl::StrCat("message ", later->js_seq, " holds events ",
                                          later->header.seq, " to ", later->header.next() - 1,
                                          " although the stream's head, message ", tip.js_seq,
                                          ", ends at ", tip.header.next() - 1,
                                          ": a record was written around Keel's conditional "
                                          "publish"));
    }
    at = later->js_seq;
  }
  return absl::OkStatus();
}

}  // namespace keel::jetstream
