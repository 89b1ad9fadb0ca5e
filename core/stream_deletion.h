// StreamDeleter: how the engine deletes a stream and what depends on it
// (EventBus::DeleteStream), crash-safely, through the bus's MetadataStore.
//
// A deletion first stores a tombstone, the record "deleting/<stream>",
// naming every stream it removes — the stream, a topic's partitions, and
// each one's dead-letter stream — with where each one's incarnation started
// (StreamInfo::incarnation_start). Then, stream by stream: its consumer groups' records, its
// declaration, then its events and the records its appends stored (a
// collection's documents), through the driver's hook, which ends the
// stream's incarnation only while it still starts where the tombstone
// recorded. Last, the topic's own declaration and the tombstone go. Every
// step can run again: a bus that opens with a tombstone finishes that
// deletion (ResumeAll) before it serves anything, and a resumed deletion
// whose events were already gone never touches the stream's new
// incarnation (which starts elsewhere).
//
// Until a deletion finishes, publishes to the streams it removes fail
// (Deleting): a deletion that failed halfway is finished by the next
// Delete of the stream or the next open, and must not take events
// acknowledged meanwhile with it.
//
// Thread safety: all methods may be called concurrently; one deletion runs
// at a time.
#ifndef KEEL_CORE_STREAM_DELETION_H_
#define KEEL_CORE_STREAM_DELETION_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/core/event_bus.h"
#include "keel/core/metadata_store.h"
#include "keel/core/mutex.h"
#include "keel/core/policy_registry.h"
#include "keel/core/replayer.h"

namespace keel {

// One stream a deletion removes, with its incarnation's start when the
// deletion began.
struct DeletionTarget {
  std::string stream;
  uint64_t incarnation_start = 0;
  friend bool operator==(const DeletionTarget&, const DeletionTarget&) = default;
};

// The tombstone's text: a line "<stream> <incarnation_start>" per target (stream names
// hold no spaces or line breaks).
std::string EncodeTombstone(const std::vector<DeletionTarget>& targets);
// kDataLoss naming `key` when `text` is not one EncodeTombstone wrote.
absl::StatusOr<std::vector<DeletionTarget>> DecodeTombstone(absl::string_view key,
                                                            absl::string_view text);

class StreamDeleter {
 public:
  // What the deleter asks of the driver.
  struct Hooks {
    std::function<absl::StatusOr<StreamInfo>(absl::string_view stream)> bounds;
    // Ends `stream`'s incarnation if it still starts at `incarnation_start`
    // and it had events since, then removes what that left behind.
    std::function<absl::Status(absl::string_view stream, uint64_t incarnation_start)> delete_events;
  };

  StreamDeleter(MetadataStore& store, PolicyRegistry& policies, Hooks hooks)
      : store_(store), policies_(policies), hooks_(std::move(hooks)) {}

  absl::StatusOr<DeletionReport> Delete(absl::string_view stream);
  // Finishes every deletion a tombstone records.
  absl::Status ResumeAll();
  // Whether an unfinished deletion removes `stream`. No lock when none is
  // unfinished.
  bool Deleting(absl::string_view stream) const;

 private:
  // The streams deleting `stream` removes, with where their incarnations start.
  absl::StatusOr<std::vector<DeletionTarget>> TargetsOf(absl::string_view stream,
                                                        std::vector<StreamInfo>& infos);
  // Whether `info`'s stream has anything to delete.
  absl::StatusOr<bool> Exists(const StreamInfo& info);
  absl::Status Finish(absl::string_view stream, const std::vector<DeletionTarget>& targets,
                      DeletionReport& report) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<uint64_t> DeleteGroups(absl::string_view stream);
  // Finishes the deletion `key`'s tombstone records.
  absl::Status FinishRecorded(absl::string_view key, absl::string_view text, DeletionReport& report)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void SetUnfinished(absl::string_view stream, const std::vector<DeletionTarget>& targets);
  void SetFinished(absl::string_view stream);

  MetadataStore& store_;
  PolicyRegistry& policies_;
  const Hooks hooks_;
  Mutex mu_;  // Held through a whole deletion.
  mutable Mutex unfinished_mu_;
  // Per unfinished deletion (by its stream): the streams it removes.
  absl::flat_hash_map<std::string, std::vector<std::string>> unfinished_
      ABSL_GUARDED_BY(unfinished_mu_);
  std::atomic<bool> any_unfinished_{false};
};

}  // namespace keel

#endif  // KEEL_CORE_STREAM_DELETION_H_
