#include <boost/url/encode.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>
#include <boost/url/url.hpp>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "keel/cmd/keel/client/http_client.h"

namespace keel::client {

absl::StatusOr<ServerAddress> ParseServerAddress(absl::string_view text) {
  absl::string_view rest = text;
  ServerAddress address;
  address.tls = absl::ConsumePrefix(&rest, "https://");
  if (!address.tls) absl::ConsumePrefix(&rest, "http://");
  absl::ConsumeSuffix(&rest, "/");
  const size_t colon = rest.rfind(':');
  uint32_t port = 0;
  if (colon == absl::string_view::npos || colon == 0 ||
      !absl::SimpleAtoi(rest.substr(colon + 1), &port) || port == 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("server address must be HOST:PORT, got '", text, "'"));
  }
  absl::string_view host = rest.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (absl::StrContains(host, ':')) {
    return absl::InvalidArgumentError(
        absl::StrCat("write IPv6 server addresses as [ADDRESS]:PORT, got '", text, "'"));
  }
  address.host = std::string(host);
  address.port = static_cast<uint16_t>(port);
  return address;
}

std::string BuildTarget(const std::vector<std::string>& segments,
                        const std::vector<std::pair<std::string, std::string>>& query) {
  boost::urls::url url;
  url.set_path_absolute(true);
  for (const std::string& segment : segments) url.segments().push_back(segment);
  // Percent-encode everything but unreserved characters: params().append
  // leaves '+' as is, which the server (like any form decoder) reads as a
  // space — an RFC 3339 time's "+00:00" would arrive as " 00:00".
  for (const auto& [key, value] : query) {
    url.encoded_params().append({boost::urls::encode(key, boost::urls::unreserved_chars),
                                 boost::urls::encode(value, boost::urls::unreserved_chars)});
  }
  return std::string(url.encoded_target());
}

}  // namespace keel::client
