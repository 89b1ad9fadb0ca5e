// DecodeSegment and SegmentReader: every part of a segment is checked
// before anything in it is believed, and every failure is kDataLoss naming
// the object.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "keel/coldstore/cold_store.h"
#include "keel/coldstore/segment/segment.h"
#include "keel/coldstore/segment/segment_layout.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/durable/crc32c.h"

namespace keel {
namespace {

using durable::Crc32c;
using namespace segment_layout;  // NOLINT: the layout's own helpers.

absl::Status Corrupt(absl::string_view object, absl::string_view what) {
  return absl::DataLossError(
      absl::StrCat("cold segment '", object.empty() ? "(unnamed)" : object, "': ", what));
}

struct Footer {
  uint64_t index_offset = 0;
  uint64_t index_size = 0;
  uint32_t segment_check = 0;
};

struct BlockRef {
  uint64_t first;
  uint64_t offset;
  uint64_t size;
};

absl::StatusOr<Footer> ParseFooter(absl::string_view object, absl::string_view footer,
                                   uint64_t segment_size) {
  if (footer.size() != kFooterBytes) return Corrupt(object, "shorter than a footer");
  if (footer.substr(kFooterBytes - kEndMagic.size()) != kEndMagic) {
    return Corrupt(object, "no end magic (truncated, or not a segment)");
  }
  if (GetU32(footer, 20) != Crc32c(footer.substr(0, 20))) {
    return Corrupt(object, "footer fails its checksum");
  }
  Footer parsed{GetU64(footer, 0), GetU64(footer, 8), GetU32(footer, 16)};
  if (parsed.index_size < 4 || parsed.index_offset > segment_size ||
      parsed.index_size > segment_size ||
      parsed.index_offset + parsed.index_size != segment_size - kFooterBytes) {
    return Corrupt(object, "footer's index bounds do not fit the segment's size");
  }
  return parsed;
}

// Parses the header at the start of `bytes` (which may run on past it);
// `header_size` receives its length.
absl::StatusOr<std::pair<SegmentHeader, uint32_t>> ParseHeader(absl::string_view object,
                                                               absl::string_view bytes,
                                                               size_t& header_size) {
  if (bytes.size() < kHeaderFixedBytes) return Corrupt(object, "shorter than a header");
  if (bytes.substr(0, kMagic.size()) != kMagic) return Corrupt(object, "no segment magic");
  if (static_cast<uint8_t>(bytes[8]) != kVersion) {
    return Corrupt(object, absl::StrCat("unknown segment version ", static_cast<uint8_t>(bytes[8]),
                                        " (written by a newer Keel?)"));
  }
  const uint8_t check = static_cast<uint8_t>(bytes[9]);
  if (check != static_cast<uint8_t>(EntryCheck::kFnv1a) &&
      check != static_cast<uint8_t>(EntryCheck::kCrc32c)) {
    return Corrupt(object, absl::StrCat("unknown entry checksum kind ", check));
  }
  const size_t stream_size = GetU16(bytes, 10);
  header_size = kHeaderFixedBytes + stream_size;
  if (bytes.size() < header_size) return Corrupt(object, "header is cut short");
  if (GetU32(bytes, header_size - 4) != Crc32c(bytes.substr(0, header_size - 4))) {
    return Corrupt(object, "header fails its checksum");
  }
  SegmentHeader header;
  header.entry_check = static_cast<EntryCheck>(check);
  header.stream = std::string(bytes.substr(12, stream_size));
  size_t at = 12 + stream_size;
  header.epoch = GetU64(bytes, at);
  header.first = GetU64(bytes, at + 8);
  header.last = GetU64(bytes, at + 16);
  header.count = GetU64(bytes, at + 24);
  header.min_time = absl::FromUnixNanos(static_cast<int64_t>(GetU64(bytes, at + 32)));
  header.max_time = absl::FromUnixNanos(static_cast<int64_t>(GetU64(bytes, at + 40)));
  const uint32_t blocks = GetU32(bytes, at + 48);
  if (header.first == 0 || header.last < header.first ||
      header.count != header.last - header.first + 1 || header.min_time > header.max_time ||
      blocks == 0 || blocks > header.count) {
    return Corrupt(object, "header's sequences, count, times or block count disagree");
  }
  return std::make_pair(std::move(header), blocks);
}

// Checks that `header` is the one `object`'s name promises (when it is a
// segment name).
absl::Status CheckAgainstName(absl::string_view object, const SegmentHeader& header) {
  absl::StatusOr<SegmentName> name = ParseSegmentObjectName(object);
  if (!name.ok()) return absl::OkStatus();
  if (name->stream != header.stream || name->first != header.first || name->last != header.last) {
    return Corrupt(object, absl::StrCat("holds '", header.stream, "' ", header.first, "..",
                                        header.last, ", not what its name says"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<BlockRef>> ParseIndex(absl::string_view object, absl::string_view index,
                                                 const SegmentHeader& header, uint32_t blocks,
                                                 size_t header_size, uint64_t index_offset) {
  if (index.size() != uint64_t{blocks} * kIndexPointBytes + 4) {
    return Corrupt(object, "index size disagrees with the header's block count");
  }
  if (GetU32(index, index.size() - 4) != Crc32c(index.substr(0, index.size() - 4))) {
    return Corrupt(object, "index fails its checksum");
  }
  std::vector<BlockRef> refs;
  refs.reserve(blocks);
  uint64_t expected_offset = header_size;
  for (uint32_t i = 0; i < blocks; ++i) {
    BlockRef ref{GetU64(index, i * kIndexPointBytes), GetU64(index, i * kIndexPointBytes + 8),
                 GetU64(index, i * kIndexPointBytes + 16)};
    const bool first_ok = i == 0 ? ref.first == header.first
                                 : ref.first > refs.back().first && ref.first <= header.last;
    if (!first_ok || ref.offset != expected_offset || ref.size < kEntryFixedBytes + 4 ||
        ref.size > index_offset - ref.offset) {
      return Corrupt(object, absl::StrCat("index point ", i, " is out of place"));
    }
    expected_offset = ref.offset + ref.size;
    refs.push_back(ref);
  }
  if (expected_offset != index_offset) return Corrupt(object, "blocks do not end at the index");
  return refs;
}

// Decodes the blocks refs[from..] held in `bytes` (which starts at
// refs[from].offset) and appends the entries from `sequence` on.
absl::Status DecodeBlocks(absl::string_view object, absl::string_view bytes,
                          const SegmentHeader& header, const std::vector<BlockRef>& refs,
                          size_t from, uint64_t sequence, std::vector<SegmentEntry>& out) {
  const uint64_t base = refs[from].offset;
  for (size_t i = from; i < refs.size(); ++i) {
    const BlockRef& ref = refs[i];
    if (ref.offset - base + ref.size > bytes.size()) {
      return Corrupt(object, absl::StrCat("block ", i, " is cut short"));
    }
    absl::string_view block = bytes.substr(ref.offset - base, ref.size);
    if (GetU32(block, block.size() - 4) != Crc32c(block.substr(0, block.size() - 4))) {
      return Corrupt(
          object, absl::StrCat("block ", i, " (from sequence ", ref.first, ") fails its checksum"));
    }
    block.remove_suffix(4);
    const uint64_t block_last = i + 1 < refs.size() ? refs[i + 1].first - 1 : header.last;
    uint64_t next = ref.first;
    while (!block.empty()) {
      if (block.size() < kEntryFixedBytes || next > block_last) {
        return Corrupt(object, absl::StrCat("block ", i, " has bytes past its entries"));
      }
      const absl::Time time = absl::FromUnixNanos(static_cast<int64_t>(GetU64(block, 0)));
      const uint32_t size = GetU32(block, 8);
      if (block.size() - kEntryFixedBytes < size) {
        return Corrupt(object, absl::StrCat("entry ", next, " runs past its block"));
      }
      absl::string_view value = block.substr(kEntryFixedBytes, size);
      if (!EntryValueChecks(header.entry_check, value)) {
        return Corrupt(object, absl::StrCat("entry ", next, " fails its own checksum"));
      }
      if (time < header.min_time || time > header.max_time) {
        return Corrupt(object, absl::StrCat("entry ", next, "'s time is outside the header's"));
      }
      if (next >= sequence) out.push_back(SegmentEntry{next, time, std::string(value)});
      block.remove_prefix(kEntryFixedBytes + size);
      ++next;
    }
    if (next != block_last + 1) {
      return Corrupt(object, absl::StrCat("block ", i, " lacks entries ", next, "..", block_last));
    }
  }
  return absl::OkStatus();
}

size_t BlockHolding(const std::vector<BlockRef>& refs, uint64_t sequence) {
  auto it = std::upper_bound(refs.begin(), refs.end(), sequence,
                             [](uint64_t s, const BlockRef& ref) { return s < ref.first; });
  return static_cast<size_t>(it - refs.begin()) - 1;
}

}  // namespace

absl::StatusOr<DecodedSegment> DecodeSegment(absl::string_view bytes,
                                             absl::string_view object_name) {
  if (bytes.size() < kFooterBytes) return Corrupt(object_name, "shorter than a footer");
  KEEL_ASSIGN_OR_RETURN(
      Footer footer,
      ParseFooter(object_name, bytes.substr(bytes.size() - kFooterBytes), bytes.size()));
  const absl::string_view before_footer = bytes.substr(0, bytes.size() - kFooterBytes);
  const uint32_t checksum = Crc32c(before_footer);
  if (checksum != footer.segment_check) return Corrupt(object_name, "fails its segment checksum");
  absl::StatusOr<SegmentName> name = ParseSegmentObjectName(object_name);
  if (name.ok() && name->checksum != checksum) {
    return Corrupt(object_name, "checksum differs from the one in its name");
  }
  size_t header_size = 0;
  KEEL_ASSIGN_OR_RETURN(
      auto header_and_blocks,
      ParseHeader(object_name, before_footer.substr(0, footer.index_offset), header_size));
  const SegmentHeader& header = header_and_blocks.first;
  KEEL_RETURN_IF_ERROR(CheckAgainstName(object_name, header));
  KEEL_ASSIGN_OR_RETURN(
      std::vector<BlockRef> refs,
      ParseIndex(object_name, bytes.substr(footer.index_offset, footer.index_size), header,
                 header_and_blocks.second, header_size, footer.index_offset));
  DecodedSegment decoded;
  decoded.header = header;
  decoded.checksum = checksum;
  decoded.entries.reserve(header.count);
  KEEL_RETURN_IF_ERROR(
      DecodeBlocks(object_name, bytes.substr(refs[0].offset, footer.index_offset - refs[0].offset),
                   header, refs, 0, header.first, decoded.entries));
  // The header's time range is the entries' own, not merely around them.
  absl::Time min_time = decoded.entries.front().time;
  absl::Time max_time = min_time;
  for (const SegmentEntry& entry : decoded.entries) {
    min_time = std::min(min_time, entry.time);
    max_time = std::max(max_time, entry.time);
  }
  if (min_time != header.min_time || max_time != header.max_time) {
    return Corrupt(object_name, "header's time range is not its entries'");
  }
  return decoded;
}

absl::StatusOr<SegmentReader> SegmentReader::Open(ColdStore& store, absl::string_view object_name,
                                                  uint64_t size) {
  // A segment an index names must be there: its absence is lost data.
  auto missing_is_loss = [&](absl::Status status) {
    if (GetErrorKind(status) == ErrorKind::kNotFound) {
      return Corrupt(object_name, absl::StrCat("is missing from ", store.Describe()));
    }
    return status;
  };
  if (size == 0) {
    absl::StatusOr<uint64_t> stored = store.Size(object_name);
    if (!stored.ok()) return missing_is_loss(stored.status());
    size = *stored;
  }
  if (size < kFooterBytes) return Corrupt(object_name, "shorter than a footer");
  absl::StatusOr<std::string> footer_bytes =
      store.ReadRange(object_name, size - kFooterBytes, kFooterBytes);
  if (!footer_bytes.ok()) return missing_is_loss(footer_bytes.status());
  KEEL_ASSIGN_OR_RETURN(Footer footer, ParseFooter(object_name, *footer_bytes, size));

  // The header is at most kHeaderFixedBytes plus a stream name; stream
  // names are short, so one read nearly always does.
  constexpr uint64_t kHeaderGuess = 512;
  absl::StatusOr<std::string> head =
      store.ReadRange(object_name, 0, std::min<uint64_t>(footer.index_offset, kHeaderGuess));
  if (!head.ok()) return missing_is_loss(head.status());
  if (head->size() >= 12) {
    const uint64_t needed = kHeaderFixedBytes + GetU16(*head, 10);
    if (needed > head->size() && needed <= footer.index_offset) {
      head = store.ReadRange(object_name, 0, needed);
      if (!head.ok()) return missing_is_loss(head.status());
    }
  }
  size_t header_size = 0;
  KEEL_ASSIGN_OR_RETURN(auto header_and_blocks, ParseHeader(object_name, *head, header_size));
  KEEL_RETURN_IF_ERROR(CheckAgainstName(object_name, header_and_blocks.first));
  absl::StatusOr<std::string> index =
      store.ReadRange(object_name, footer.index_offset, footer.index_size);
  if (!index.ok()) return missing_is_loss(index.status());
  KEEL_ASSIGN_OR_RETURN(std::vector<BlockRef> refs,
                        ParseIndex(object_name, *index, header_and_blocks.first,
                                   header_and_blocks.second, header_size, footer.index_offset));
  SegmentReader reader;
  reader.store_ = &store;
  reader.name_ = std::string(object_name);
  reader.header_ = std::move(header_and_blocks.first);
  for (const BlockRef& ref : refs) reader.blocks_.push_back(Block{ref.first, ref.offset, ref.size});
  return reader;
}

absl::StatusOr<std::vector<SegmentEntry>> SegmentReader::ReadFrom(uint64_t sequence) {
  if (sequence < header_.first || sequence > header_.last) {
    return absl::OutOfRangeError(absl::StrCat("cold segment '", name_, "' holds ", header_.first,
                                              "..", header_.last, ", not ", sequence));
  }
  std::vector<BlockRef> refs;
  refs.reserve(blocks_.size());
  for (const Block& block : blocks_)
    refs.push_back(BlockRef{block.first, block.offset, block.size});
  const size_t from = BlockHolding(refs, sequence);
  const uint64_t end = refs.back().offset + refs.back().size;
  absl::StatusOr<std::string> bytes =
      store_->ReadRange(name_, refs[from].offset, end - refs[from].offset);
  if (!bytes.ok()) {
    if (GetErrorKind(bytes.status()) == ErrorKind::kNotFound) {
      return Corrupt(name_, absl::StrCat("is missing from ", store_->Describe()));
    }
    return bytes.status();
  }
  std::vector<SegmentEntry> entries;
  entries.reserve(header_.last - sequence + 1);
  KEEL_RETURN_IF_ERROR(DecodeBlocks(name_, *bytes, header_, refs, from, sequence, entries));
  return entries;
}

}  // namespace keel
