// Cold segments (rfcs/0008-cold-segments.md): immutable objects holding a
// run of one stream's consecutive entries, in the durable driver's stored
// encoding with their checksums, behind a header, with a sparse index to
// seek by sequence and a footer checksum.
//
//   SegmentWriter writer(SegmentHeaderFields{"orders", epoch, EntryCheck::kCrc32c});
//   for (...) KEEL_RETURN_IF_ERROR(writer.Add(sequence, time, stored_value));
//   KEEL_ASSIGN_OR_RETURN(EncodedSegment segment, writer.Finish());
//   cold_store.PutIfAbsent(segment.object_name, segment.bytes);
//
//   DecodeSegment(bytes)            every check, all entries (a whole read)
//   SegmentReader::Open(store, name) then ReadFrom(sequence): header, index
//                                   and the blocks from `sequence` on, by
//                                   range reads
//
// Every decoding failure is kDataLoss (absl) naming the object and what is
// wrong: a corrupt, short or missing segment is never skipped.
//
// Thread safety: SegmentWriter and SegmentReader are used by one thread at
// a time; the functions are pure.
#ifndef KEEL_COLDSTORE_SEGMENT_SEGMENT_H_
#define KEEL_COLDSTORE_SEGMENT_SEGMENT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace keel {

// Which checksum the stored entries carry: the durable store's format
// (drivers/durable/key_layout.h, StoreFormat) they were tiered from.
enum class EntryCheck : uint8_t {
  kFnv1a = 1,
  kCrc32c = 2,
};

struct SegmentHeader {
  std::string stream;
  uint64_t epoch = 0;  // The store epoch of every entry.
  EntryCheck entry_check = EntryCheck::kCrc32c;
  uint64_t first = 0;  // Sequences [first, last], all present.
  uint64_t last = 0;
  uint64_t count = 0;                          // last - first + 1.
  absl::Time min_time = absl::InfinitePast();  // Earliest and latest entry time.
  absl::Time max_time = absl::InfinitePast();
  friend bool operator==(const SegmentHeader&, const SegmentHeader&) = default;
};

struct SegmentEntry {
  uint64_t sequence = 0;
  absl::Time time;
  // The durable driver's stored entry value: check:u32be envelope.
  std::string value;
  friend bool operator==(const SegmentEntry&, const SegmentEntry&) = default;
};

struct EncodedSegment {
  SegmentHeader header;
  std::string bytes;
  uint32_t checksum = 0;  // The footer's CRC32C of the segment.
  std::string object_name;
};

// "stream=<stream>/<first:020>-<last:020>-<checksum:08x>.seg": the name
// depends only on the content, so a repeated upload is harmless and two
// different segments never share a name.
std::string SegmentObjectName(absl::string_view stream, uint64_t first, uint64_t last,
                              uint32_t checksum);
// Every segment of `stream` has a name starting with this.
std::string SegmentObjectPrefix(absl::string_view stream);

struct SegmentName {
  std::string stream;
  uint64_t first = 0;
  uint64_t last = 0;
  uint32_t checksum = 0;
};
// kInvalidArgument when `name` is not a segment's object name.
absl::StatusOr<SegmentName> ParseSegmentObjectName(absl::string_view name);

// OK when the entry value's checksum matches its envelope.
bool EntryValueChecks(EntryCheck check, absl::string_view value);

class SegmentWriter {
 public:
  // Entries per sparse-index block: a seek reads at most this many entries
  // before the one it wants.
  static constexpr uint32_t kDefaultEntriesPerBlock = 64;

  SegmentWriter(std::string stream, uint64_t epoch, EntryCheck entry_check,
                uint32_t entries_per_block = kDefaultEntriesPerBlock);

  // Appends the next entry: `sequence` is one more than the last added
  // (any for the first). kInvalidArgument for a gap or a value whose own
  // checksum fails (a corrupt hot entry is never tiered).
  absl::Status Add(uint64_t sequence, absl::Time time, absl::string_view value);

  uint64_t entries() const { return header_.count; }
  // Bytes Finish would return, about.
  size_t ApproximateBytes() const { return body_.size() + block_.size() + 64; }

  // The segment. kFailedPrecondition when no entry was added.
  absl::StatusOr<EncodedSegment> Finish();

 private:
  void CloseBlock();

  SegmentHeader header_;
  const uint32_t entries_per_block_;
  std::string body_;   // Closed blocks.
  std::string block_;  // The open block's entries.
  uint32_t block_entries_ = 0;
  uint64_t block_first_ = 0;
  struct IndexPoint {
    uint64_t first;
    uint64_t offset;  // From the segment's start.
    uint64_t size;    // The block's bytes, its check included.
  };
  std::vector<IndexPoint> index_;
  std::string header_bytes_;  // Encoded at Finish.
};

struct DecodedSegment {
  SegmentHeader header;
  std::vector<SegmentEntry> entries;
  uint32_t checksum = 0;
};

// Checks everything: magic, version, header, index, footer, each block's
// and the whole segment's checksum, each entry's own checksum, consecutive
// sequences, the count and the time range. `object_name` is for messages
// (and, when it parses as a segment name, must agree with the header and
// the checksum).
absl::StatusOr<DecodedSegment> DecodeSegment(absl::string_view bytes,
                                             absl::string_view object_name = "");

class ColdStore;

class SegmentReader {
 public:
  // Reads and checks the footer, header and index of `object_name` by
  // range reads. `size` is the object's size when the caller knows it
  // (0: asks the store). kDataLoss naming the object when it is missing,
  // short or corrupt; the store's error when it cannot be reached.
  static absl::StatusOr<SegmentReader> Open(ColdStore& store, absl::string_view object_name,
                                            uint64_t size = 0);

  const SegmentHeader& header() const { return header_; }

  // The entries from `sequence` (within [first, last]) to the last, read
  // from the block that holds `sequence` on, every block checked.
  absl::StatusOr<std::vector<SegmentEntry>> ReadFrom(uint64_t sequence);

 private:
  struct Block {
    uint64_t first;
    uint64_t offset;
    uint64_t size;
  };
  SegmentReader() = default;

  ColdStore* store_ = nullptr;
  std::string name_;
  SegmentHeader header_;
  std::vector<Block> blocks_;
};

}  // namespace keel

#endif  // KEEL_COLDSTORE_SEGMENT_SEGMENT_H_
