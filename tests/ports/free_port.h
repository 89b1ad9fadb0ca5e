// FreePort: a loopback TCP port for a server a test starts.
#ifndef KEEL_TESTS_PORTS_FREE_PORT_H_
#define KEEL_TESTS_PORTS_FREE_PORT_H_

#include "absl/status/statusor.h"

namespace keel::testing {

// A port nothing listens on now (the kernel's pick for a socket bound to
// port 0); the server binds it moments later.
absl::StatusOr<int> FreePort();

}  // namespace keel::testing

#endif  // KEEL_TESTS_PORTS_FREE_PORT_H_
