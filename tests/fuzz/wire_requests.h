// WireRequests: a fuzzer's bytes as what one connection sends, taken apart
// request by request by the daemon's own RequestParser under the daemon's
// header and body limits, as its HTTP session reads them.
#ifndef KEEL_TESTS_FUZZ_WIRE_REQUESTS_H_
#define KEEL_TESTS_FUZZ_WIRE_REQUESTS_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "keel/cmd/keel/server/http_types.h"

namespace keel::fuzz {

// The limits of a fuzzed daemon: its defaults would let one input reach the
// megabyte and slow every run; small ones put the limit checks in reach.
inline constexpr size_t kFuzzBodyLimit = 64 * 1024;
inline constexpr size_t kFuzzHeaderLimit = 8 * 1024;

struct WireRequest {
  std::string line;  // "METHOD target", as the request log shows it.
  server::HttpRequest request;
  bool keep_alive = false;
  // The target did not decode (the session answers 400 and closes).
  absl::Status target = absl::OkStatus();
};

// What the connection's bytes hold: the complete requests, in order, up to
// the first that the parser refuses (413, 431 or malformed: the session
// answers or closes, and reads no further) or that is not complete, and up
// to the first that does not keep the connection alive. `piece` splits the
// bytes into reads of that size (0: one read), as a socket may deliver them.
std::vector<std::unique_ptr<WireRequest>> ReadWireRequests(absl::string_view bytes, size_t piece);

}  // namespace keel::fuzz

#endif  // KEEL_TESTS_FUZZ_WIRE_REQUESTS_H_
