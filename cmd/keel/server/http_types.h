// Plain request/response values between the Beast sessions and the API
// handlers, so handlers are independent of the transport and testable
// without sockets.
//
// Thread safety: value types.
#ifndef KEEL_CMD_KEEL_SERVER_HTTP_TYPES_H_
#define KEEL_CMD_KEEL_SERVER_HTTP_TYPES_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace keel::server {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // The path as sent (percent-encoded), for messages and logs.
  std::vector<std::string> segments;  // Decoded path segments.
  // Decoded query parameters (last one wins).
  std::map<std::string, std::string, std::less<>> query;
  // Lower-case names. A flat map: a publish carries a handful of headers,
  // and a tree allocated a node for each on every request.
  absl::flat_hash_map<std::string, std::string> headers;
  std::string body;

  // Views into this request ("" when absent): looking up and reading a
  // header or parameter copies nothing.
  absl::string_view Header(absl::string_view lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? absl::string_view() : absl::string_view(it->second);
  }
  absl::string_view Query(absl::string_view name) const {
    auto it = query.find(name);
    return it == query.end() ? absl::string_view() : absl::string_view(it->second);
  }
  bool HasQuery(absl::string_view name) const { return query.find(name) != query.end(); }
};

struct HttpResponse {
  int status = 200;
  // A string literal (each response names one of a few fixed types): a
  // string member allocated on every response for "application/json".
  absl::string_view content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_HTTP_TYPES_H_
