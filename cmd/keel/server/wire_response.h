// WireResponse: an HttpResponse as the bytes of an HTTP/1.1 response, head
// and body in one buffer, so that a session writes it with one send and no
// per-response header container (Beast's fields and serializer cost more
// than the rest of a small publish's answer).
//
// Thread safety: a pure function.
#ifndef KEEL_CMD_KEEL_SERVER_WIRE_RESPONSE_H_
#define KEEL_CMD_KEEL_SERVER_WIRE_RESPONSE_H_

#include <string>

#include "absl/strings/string_view.h"
#include "keel/cmd/keel/server/http_types.h"

namespace keel::server {

// The status line, Content-Type, Access-Control-Allow-Origin (unless
// `cors_origin` is empty), the response's own headers, Content-Length
// (except for 1xx, 204 and 304), "Connection: close" unless `keep_alive`,
// then the body. Written into `out`, replacing what it held: a session
// reuses one buffer for all its responses.
void WireResponse(const HttpResponse& response, absl::string_view cors_origin, bool keep_alive,
                  std::string& out);

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_WIRE_RESPONSE_H_
