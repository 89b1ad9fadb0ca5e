// Partitioned topics. A topic declared with N partitions (StreamPolicy::
// partitions) is the streams "<topic>:0" .. "<topic>:N-1", each ordered on
// its own. An event's partition is chosen by its partition key with a stable
// hash that clients may compute themselves:
//
//   partition = FNV-1a-64(partition key bytes) mod N
//
// (offset basis 14695981039346656037, prime 1099511628211). PublishToTopic
// splits a batch by partition, keeps each partition's events in batch order
// and publishes each part as one all-or-nothing batch; parts succeed or fail
// independently and the result is reported per event.
//
// Thread safety: functions are safe to call concurrently.
#ifndef KEEL_CORE_TOPIC_H_
#define KEEL_CORE_TOPIC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/core/event_bus.h"

namespace keel {

uint32_t PartitionOf(absl::string_view partition_key, uint32_t partitions);
std::string PartitionStream(absl::string_view topic, uint32_t partition);

// Publishes `events` (partition_keys[i] is event i's key, required) to the
// partitions of `topic`. Whole-request errors come first and publish
// nothing: kNotFound when `topic` is not declared with partitions,
// kInvalidArgument for a missing key. Otherwise one result per event.
absl::StatusOr<std::vector<absl::StatusOr<Receipt>>> PublishToTopic(
    EventBus& bus, absl::string_view topic, std::vector<Event> events,
    const std::vector<std::string>& partition_keys);

}  // namespace keel

#endif  // KEEL_CORE_TOPIC_H_
