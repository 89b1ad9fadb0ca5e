#include "cmd/keel/server/wire_response.h"

#include <boost/beast/http/status.hpp>

#include "absl/strings/str_cat.h"

namespace keel::server {

void WireResponse(const HttpResponse& response, absl::string_view cors_origin, bool keep_alive,
                  std::string& out) {
  const int status = response.status;
  const bool has_body = status >= 200 && status != 204 && status != 304;
  const auto reason = boost::beast::http::obsolete_reason(
      static_cast<boost::beast::http::status>(status));
  out.clear();
  out.reserve(160 + response.body.size());
  absl::StrAppend(&out, "HTTP/1.1 ", status, " ", absl::string_view(reason.data(), reason.size()),
                  "\r\nContent-Type: ", response.content_type, "\r\n");
  if (!cors_origin.empty()) absl::StrAppend(&out, "Access-Control-Allow-Origin: ", cors_origin, "\r\n");
  for (const auto& [name, value] : response.headers) absl::StrAppend(&out, name, ": ", value, "\r\n");
  if (has_body) absl::StrAppend(&out, "Content-Length: ", response.body.size(), "\r\n");
  if (!keep_alive) out += "Connection: close\r\n";
  out += "\r\n";
  if (has_body) out += response.body;
}

}  // namespace keel::server
