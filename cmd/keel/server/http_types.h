// Plain request/response values between the Beast sessions and the API
// handlers, so handlers are independent of the transport and testable
// without sockets.
//
// Thread safety: value types.
#ifndef KEEL_CMD_KEEL_SERVER_HTTP_TYPES_H_
#define KEEL_CMD_KEEL_SERVER_HTTP_TYPES_H_

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace keel::server {

class Grant;

// A request's header fields by lower-case name; a repeated field keeps its
// last value. A connection reuses one HttpRequest (see RequestParser), and
// the fields reuse their strings: the next request's fields are copied into
// the storage of the last one's, where a hash table of strings was
// allocated afresh for every request. Lookups scan from the newest field: a
// request carries a handful (Beast's header limit bounds the rest).
class HeaderFields {
 public:
  // The value of field `lower_name`; "" when absent.
  absl::string_view Get(absl::string_view lower_name) const;
  // Adds a field, its name stored lower-case.
  void Add(absl::string_view name, absl::string_view value);
  // Forgets every field, keeping the storage of kKeptFields fields whose
  // strings are at most kKeptFieldBytes long: an idle connection keeps
  // little.
  void Clear();
  size_t size() const { return size_; }

 private:
  static constexpr size_t kKeptFields = 16;
  static constexpr size_t kKeptFieldBytes = 256;

  std::vector<std::pair<std::string, std::string>> fields_;  // The first size_ are set.
  size_t size_ = 0;
};

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // The path as sent (percent-encoded), for messages and logs.
  std::vector<std::string> segments;  // Decoded path segments.
  // Decoded query parameters (last one wins).
  std::map<std::string, std::string, std::less<>> query;
  HeaderFields headers;
  std::string body;
  // What the request's credentials allow, set by the RequestGate that
  // admitted it; null when the daemon checks no credentials. Handlers
  // narrow what they serve to it (a tenant, the streams of a list).
  std::shared_ptr<const Grant> grant;
  // Whom the per-token limits count the request under, set by the
  // RequestGate when such a limit is set: its bearer token, or on a daemon
  // that checks no credentials, the client's address.
  std::string limit_key;

  // Views into this request ("" when absent): looking up and reading a
  // header or parameter copies nothing.
  absl::string_view Header(absl::string_view lower_name) const { return headers.Get(lower_name); }
  absl::string_view Query(absl::string_view name) const {
    auto it = query.find(name);
    return it == query.end() ? absl::string_view() : absl::string_view(it->second);
  }
  bool HasQuery(absl::string_view name) const { return query.find(name) != query.end(); }

  // Empties the request for the next one on its connection, keeping the
  // storage of a small request (kKeptPathBytes of path, kKeptSegments
  // segments, kKeptBodyBytes of body, the fields HeaderFields keeps): an
  // idle connection that once carried a large one gives the rest back.
  void Clear();

  static constexpr size_t kKeptPathBytes = 256;
  static constexpr size_t kKeptSegments = 16;
  static constexpr size_t kKeptBodyBytes = 4096;
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
