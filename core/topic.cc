#include "keel/core/topic.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/core/fnv.h"
#include "keel/core/status_macros.h"

namespace keel {

uint32_t PartitionOf(absl::string_view partition_key, uint32_t partitions) {
  return static_cast<uint32_t>(Fnv1a64(partition_key) % partitions);
}

std::string PartitionStream(absl::string_view topic, uint32_t partition) {
  return absl::StrCat(topic, ":", partition);
}

absl::StatusOr<std::vector<absl::StatusOr<Receipt>>> PublishToTopic(
    EventBus& bus, absl::string_view topic, std::vector<Event> events,
    const std::vector<std::string>& partition_keys) {
  KEEL_ASSIGN_OR_RETURN(StreamPolicy policy, bus.PolicyOf(topic));
  if (policy.partitions == 0) {
    return NotFound(absl::StrCat("'", topic, "' is not a topic declared with partitions"));
  }
  if (partition_keys.size() != events.size()) {
    return InvalidArgument("every event of a topic publish needs a partition key");
  }
  // Partition -> indexes of its events, in batch order.
  std::map<uint32_t, std::vector<size_t>> parts;
  for (size_t i = 0; i < events.size(); ++i) {
    if (partition_keys[i].empty()) {
      return InvalidArgument(absl::StrCat("event ", i, ": partitionKey is required to publish to ",
                                          "topic '", topic, "'"));
    }
    parts[PartitionOf(partition_keys[i], policy.partitions)].push_back(i);
  }
  std::vector<absl::StatusOr<Receipt>> results(events.size(), absl::UnknownError("unset"));
  for (const auto& [partition, indexes] : parts) {
    const std::string stream = PartitionStream(topic, partition);
    std::vector<Event> part;
    part.reserve(indexes.size());
    for (size_t i : indexes) {
      Event event = std::move(events[i]);
      event.stream = stream;
      part.push_back(std::move(event));
    }
    absl::StatusOr<std::vector<Receipt>> receipts = bus.PublishBatch(stream, std::move(part));
    for (size_t k = 0; k < indexes.size(); ++k) {
      if (receipts.ok()) {
        results[indexes[k]] = std::move((*receipts)[k]);
      } else {
        results[indexes[k]] = receipts.status();
      }
    }
  }
  return results;
}

}  // namespace keel
