// PlanLogTrim: which oldest events of a stream must go so that it is back
// within its RetentionLimits, read through the stream's log.
//
// Thread safety: reads only; may run concurrently with appends (the engine
// applies the cut on its committing thread, where TrimPrefix refuses it if
// the stream's first sequence moved meanwhile).
#ifndef KEEL_CORE_LOG_TRIM_H_
#define KEEL_CORE_LOG_TRIM_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/core/stream_log.h"
#include "keel/core/stream_policy.h"

namespace keel {

// At most `budget` events; an empty cut (events() == 0) when within bounds.
absl::StatusOr<LogTrim> PlanLogTrim(StreamLog& log, absl::string_view stream,
                                    const LogBounds& bounds, const RetentionLimits& limits,
                                    absl::Time now, uint64_t budget);

}  // namespace keel

#endif  // KEEL_CORE_LOG_TRIM_H_
