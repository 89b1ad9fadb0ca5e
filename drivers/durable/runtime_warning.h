// RuntimeWarning: the event the durable driver publishes to stream
// `keel.runtime` when it runs in a condition its users must know of — with
// no store (degraded mode) or after a crash (an unclean open) — so that
// anything following the bus sees it, not only the log.
//
// Thread safety: a pure function.
#ifndef KEEL_DRIVERS_DURABLE_RUNTIME_WARNING_H_
#define KEEL_DRIVERS_DURABLE_RUNTIME_WARNING_H_

#include "absl/strings/string_view.h"
#include "keel/core/event.h"

namespace keel::durable {

inline constexpr char kRuntimeStream[] = "keel.runtime";
inline constexpr char kRuntimeWarningType[] = "runtime.warning";

// Type `runtime.warning` on `keel.runtime`, content type application/json,
// data {"driver":"durable","message":"<message>"}.
Event RuntimeWarning(absl::string_view message);

}  // namespace keel::durable

#endif  // KEEL_DRIVERS_DURABLE_RUNTIME_WARNING_H_
