// FreePort: a loopback TCP port for a server a test starts.
#ifndef KEEL_TESTS_PORTS_FREE_PORT_H_
#define KEEL_TESTS_PORTS_FREE_PORT_H_

#include "absl/status/statusor.h"

namespace keel::testing {

// A port nothing listens on now, for a server that binds it moments later.
// It lies below the kernel's ephemeral range: a port the kernel picked
// (bound to port 0) is what the next outgoing connection of any process may
// take as its local port before the server binds it, and tests run side by
// side make many connections. A process is never handed the same port twice.
//
// Thread safety: safe to call from several threads.
absl::StatusOr<int> FreePort();

}  // namespace keel::testing

#endif  // KEEL_TESTS_PORTS_FREE_PORT_H_
