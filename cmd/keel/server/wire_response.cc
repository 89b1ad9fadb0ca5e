#include "keel/cmd/keel/server/wire_response.h"

#include <ostream>  // Boost's string_view, in status.hpp, prints to streams.

#include <boost/beast/http/status.hpp>

#include "keel/cmd/keel/server/append_decimal.h"

namespace keel::server {
namespace {

void AppendHeader(absl::string_view name, absl::string_view value, std::string& out) {
  out.append(name.data(), name.size());
  out += ": ";
  out.append(value.data(), value.size());
  out += "\r\n";
}

}  // namespace

void WireResponse(const HttpResponse& response, absl::string_view cors_origin, bool keep_alive,
                  std::string& out) {
  const int status = response.status;
  const bool has_body = status >= 200 && status != 204 && status != 304;
  const auto reason = boost::beast::http::obsolete_reason(
      static_cast<boost::beast::http::status>(status));
  out.clear();
  out.reserve(160 + response.body.size());
  // Piece by piece: absl::StrAppend's general joining took twice as long.
  out += "HTTP/1.1 ";
  AppendDecimal(static_cast<uint64_t>(status), out);
  out += ' ';
  out.append(reason.data(), reason.size());
  out += "\r\nContent-Type: ";
  out.append(response.content_type.data(), response.content_type.size());
  out += "\r\n";
  if (!cors_origin.empty()) AppendHeader("Access-Control-Allow-Origin", cors_origin, out);
  for (const auto& [name, value] : response.headers) AppendHeader(name, value, out);
  if (has_body) {
    out += "Content-Length: ";
    AppendDecimal(response.body.size(), out);
    out += "\r\n";
  }
  if (!keep_alive) out += "Connection: close\r\n";
  out += "\r\n";
  if (has_body) out += response.body;
}

}  // namespace keel::server
