// LinkBuiltinDrivers: keeps every driver Keel ships in a static link; and
// the names of the built-in drivers a host picks when the user names none.
//
// Drivers register themselves from static initialisers in their own object
// files; a static linker drops object files that nothing references. Calling
// this function once (keel_cli::Main does) references each built-in driver's
// force-link hook so their registrations always run.
//
// Thread safety: safe to call from any thread, any number of times.
#ifndef KEEL_DRIVERS_BUILTIN_DRIVERS_H_
#define KEEL_DRIVERS_BUILTIN_DRIVERS_H_

#include "absl/strings/string_view.h"

namespace keel {

void LinkBuiltinDrivers();

// The driver a server runs when none is named: the one that keeps events
// across restarts ("durable").
absl::string_view DefaultDriverName();

// The built-in driver that leaves nothing behind when the process ends
// ("memory"): the default of a check that must not write anywhere.
absl::string_view EphemeralDriverName();

}  // namespace keel

#endif  // KEEL_DRIVERS_BUILTIN_DRIVERS_H_
