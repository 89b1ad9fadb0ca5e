// LinkBuiltinDrivers: keeps every driver Keel ships in a static link.
//
// Drivers register themselves from static initialisers in their own object
// files; a static linker drops object files that nothing references. Calling
// this function once (keel_cli::Main does) references each built-in driver's
// force-link hook so their registrations always run.
//
// Thread safety: safe to call from any thread, any number of times.
#ifndef KEEL_DRIVERS_BUILTIN_DRIVERS_H_
#define KEEL_DRIVERS_BUILTIN_DRIVERS_H_

namespace keel {

void LinkBuiltinDrivers();

}  // namespace keel

#endif  // KEEL_DRIVERS_BUILTIN_DRIVERS_H_
