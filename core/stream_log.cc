#include "keel/core/stream_log.h"

#include <string>

#include "keel/core/cursor.h"

namespace keel {

StreamInfo StreamInfoAt(absl::string_view stream, uint64_t epoch, const LogBounds& bounds) {
  StreamInfo info;
  info.stream = std::string(stream);
  info.first_sequence = bounds.first;
  info.last_sequence = bounds.last();
  info.count = bounds.count();
  info.bytes = bounds.bytes;
  info.oldest_time = bounds.oldest_time;
  info.incarnation_start = bounds.incarnation_start;
  info.head = Cursor::For(stream, epoch, bounds.last());
  return info;
}

}  // namespace keel
