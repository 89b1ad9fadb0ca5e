#include "keel/cmd/keel/server/push/endpoint_url.h"

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"

namespace keel::push {

absl::StatusOr<EndpointUrl> ParseEndpointUrl(absl::string_view text) {
  auto parsed = boost::urls::parse_absolute_uri(std::string_view(text.data(), text.size()));
  if (!parsed) return InvalidArgument(absl::StrCat("endpoint '", text, "' is not an absolute URL"));
  const boost::urls::url_view url = *parsed;
  EndpointUrl endpoint;
  if (url.scheme() == "https") {
    endpoint.tls = true;
  } else if (url.scheme() != "http") {
    return InvalidArgument(absl::StrCat("endpoint '", text, "' must be http:// or https://"));
  }
  if (!url.has_authority() || url.host().empty()) {
    return InvalidArgument(absl::StrCat("endpoint '", text, "' names no host"));
  }
  if (url.has_userinfo() || url.has_fragment()) {
    return InvalidArgument(
        absl::StrCat("endpoint '", text, "' may carry neither user info nor a fragment"));
  }
  endpoint.host = url.host_type() == boost::urls::host_type::ipv6
                      ? std::string(url.encoded_host_address())
                      : std::string(url.host());
  if (endpoint.host.size() > 2 && endpoint.host.front() == '[') {
    endpoint.host = endpoint.host.substr(1, endpoint.host.size() - 2);
  }
  endpoint.port = endpoint.tls ? 443 : 80;
  if (url.has_port()) {
    uint32_t port = 0;
    if (!absl::SimpleAtoi(std::string(url.port()), &port) || port == 0 || port > 65535) {
      return InvalidArgument(absl::StrCat("endpoint '", text, "' has a bad port"));
    }
    endpoint.port = static_cast<uint16_t>(port);
  }
  endpoint.target = std::string(url.encoded_path());
  if (endpoint.target.empty()) endpoint.target = "/";
  if (url.has_query()) absl::StrAppend(&endpoint.target, "?", std::string(url.encoded_query()));
  return endpoint;
}

}  // namespace keel::push
