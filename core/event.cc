#include "keel/core/event.h"

namespace keel {

uint64_t Event::ApproximateSize() const {
  uint64_t size = stream.size() + id.size() + type.size() + tenant.size() + payload.size() +
                  content_type.size() + sizeof(sequence) + sizeof(int64_t);
  for (const auto& [key, value] : attributes) size += key.size() + value.size();
  if (idempotency_key) size += idempotency_key->size();
  return size;
}

}  // namespace keel
