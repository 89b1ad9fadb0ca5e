#include <utility>

#include "absl/strings/str_cat.h"
#include "keel/coldstore/segment/segment.h"
#include "keel/coldstore/segment/segment_layout.h"
#include "keel/core/errors.h"
#include "keel/drivers/durable/crc32c.h"

namespace keel {

using durable::Crc32c;
using namespace segment_layout;  // NOLINT: the layout's own helpers.

SegmentWriter::SegmentWriter(std::string stream, uint64_t epoch, EntryCheck entry_check,
                             uint32_t entries_per_block)
    : entries_per_block_(entries_per_block == 0 ? 1 : entries_per_block) {
  header_.stream = std::move(stream);
  header_.epoch = epoch;
  header_.entry_check = entry_check;
}

absl::Status SegmentWriter::Add(uint64_t sequence, absl::Time time, absl::string_view value) {
  if (header_.count > 0 && sequence != header_.last + 1) {
    return InvalidArgument(absl::StrCat("segment of '", header_.stream, "': entry ", sequence,
                                        " does not follow ", header_.last));
  }
  if (sequence == 0) return InvalidArgument("segment: sequence 0 is not an event's");
  if (!EntryValueChecks(header_.entry_check, value)) {
    return InvalidArgument(absl::StrCat("segment of '", header_.stream, "': entry ", sequence,
                                        " fails its own checksum"));
  }
  if (value.size() > UINT32_MAX) return InvalidArgument("segment: entry over 4 GiB");
  if (header_.count == 0) {
    header_.first = sequence;
    header_.min_time = time;
    header_.max_time = time;
  }
  header_.last = sequence;
  ++header_.count;
  header_.min_time = std::min(header_.min_time, time);
  header_.max_time = std::max(header_.max_time, time);
  if (block_entries_ == 0) block_first_ = sequence;
  PutU64(block_, static_cast<uint64_t>(absl::ToUnixNanos(time)));
  PutU32(block_, static_cast<uint32_t>(value.size()));
  block_.append(value.data(), value.size());
  if (++block_entries_ == entries_per_block_) CloseBlock();
  return absl::OkStatus();
}

void SegmentWriter::CloseBlock() {
  if (block_entries_ == 0) return;
  PutU32(block_, Crc32c(block_));
  // Offsets are from the body's start until Finish knows the header's size.
  index_.push_back(IndexPoint{block_first_, body_.size(), block_.size()});
  body_ += block_;
  block_.clear();
  block_entries_ = 0;
}

absl::StatusOr<EncodedSegment> SegmentWriter::Finish() {
  if (header_.count == 0) return absl::FailedPreconditionError("segment: no entry added");
  CloseBlock();
  std::string out;
  out.reserve(kHeaderFixedBytes + header_.stream.size() + body_.size() +
              index_.size() * kIndexPointBytes + 4 + kFooterBytes);
  out.append(kMagic.data(), kMagic.size());
  out.push_back(static_cast<char>(kVersion));
  out.push_back(static_cast<char>(header_.entry_check));
  PutU16(out, static_cast<uint16_t>(header_.stream.size()));
  out += header_.stream;
  PutU64(out, header_.epoch);
  PutU64(out, header_.first);
  PutU64(out, header_.last);
  PutU64(out, header_.count);
  PutU64(out, static_cast<uint64_t>(absl::ToUnixNanos(header_.min_time)));
  PutU64(out, static_cast<uint64_t>(absl::ToUnixNanos(header_.max_time)));
  PutU32(out, static_cast<uint32_t>(index_.size()));
  PutU32(out, Crc32c(out));
  const uint64_t body_offset = out.size();
  out += body_;
  const uint64_t index_offset = out.size();
  for (const IndexPoint& point : index_) {
    PutU64(out, point.first);
    PutU64(out, body_offset + point.offset);
    PutU64(out, point.size);
  }
  PutU32(out, Crc32c(absl::string_view(out).substr(index_offset)));
  const uint64_t index_size = out.size() - index_offset;
  const uint32_t segment_check = Crc32c(out);
  const size_t footer_offset = out.size();
  PutU64(out, index_offset);
  PutU64(out, index_size);
  PutU32(out, segment_check);
  PutU32(out, Crc32c(absl::string_view(out).substr(footer_offset)));
  out.append(kEndMagic.data(), kEndMagic.size());

  EncodedSegment segment;
  segment.header = header_;
  // Times as stored: the header's are whole nanoseconds.
  segment.header.min_time = absl::FromUnixNanos(absl::ToUnixNanos(header_.min_time));
  segment.header.max_time = absl::FromUnixNanos(absl::ToUnixNanos(header_.max_time));
  segment.checksum = segment_check;
  segment.object_name =
      SegmentObjectName(header_.stream, header_.first, header_.last, segment_check);
  segment.bytes = std::move(out);
  return segment;
}

}  // namespace keel
