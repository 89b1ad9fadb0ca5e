// EndpointUrl: an http:// or https:// URL taken apart for the HTTP client
// (host, port, TLS, origin-form target).
//
// Thread safety: a plain value type.
#ifndef KEEL_CMD_KEEL_SERVER_PUSH_ENDPOINT_URL_H_
#define KEEL_CMD_KEEL_SERVER_PUSH_ENDPOINT_URL_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace keel::push {

struct EndpointUrl {
  std::string host;   // Without brackets for an IPv6 literal.
  uint16_t port = 0;  // The scheme's default when the URL names none.
  bool tls = false;
  std::string target;  // "/path?query", "/" when the URL has no path.
};

// kInvalidArgument unless `url` is an absolute http or https URL with a
// host, no user info and no fragment.
absl::StatusOr<EndpointUrl> ParseEndpointUrl(absl::string_view url);

}  // namespace keel::push

#endif  // KEEL_CMD_KEEL_SERVER_PUSH_ENDPOINT_URL_H_
