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

namespace keel::server {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // The path as sent (percent-encoded), for messages and logs.
  std::vector<std::string> segments;  // Decoded path segments.
  std::map<std::string, std::string> query;  // Decoded query parameters (last one wins).
  // Lower-case names. A flat map: a publish carries a handful of headers,
  // and a tree allocated a node for each on every request.
  absl::flat_hash_map<std::string, std::string> headers;
  std::string body;

  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? std::string() : it->second;
  }
  std::string Query(const std::string& name) const {
    auto it = query.find(name);
    return it == query.end() ? std::string() : it->second;
  }
  bool HasQuery(const std::string& name) const { return query.count(name) > 0; }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_HTTP_TYPES_H_
