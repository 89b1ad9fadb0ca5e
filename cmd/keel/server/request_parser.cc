#include "cmd/keel/server/request_parser.h"

#include <boost/url/parse.hpp>
#include <utility>

#include "absl/strings/ascii.h"
#include "core/errors.h"

namespace keel::server {

void RequestParser::on_request_impl(boost::beast::http::verb, string_view method,
                                    string_view target, int, error_code&) {
  request_.method.assign(method.data(), method.size());
  request_line_.assign(method.data(), method.size());
  request_line_.push_back(' ');
  target_at_ = request_line_.size();
  request_line_.append(target.data(), target.size());
  // Reserved up front: growing them allocated again on every request.
  request_.headers.reserve(16);
}

void RequestParser::on_field_impl(boost::beast::http::field, string_view name, string_view value,
                                  error_code&) {
  std::string lower(name.data(), name.size());
  absl::AsciiStrToLower(&lower);
  request_.headers.insert_or_assign(std::move(lower), std::string(value.data(), value.size()));
}

void RequestParser::on_body_init_impl(const boost::optional<std::uint64_t>& content_length,
                                      error_code&) {
  // Beast has checked the length against the body limit.
  if (content_length) request_.body.reserve(static_cast<size_t>(*content_length));
}

std::size_t RequestParser::on_body_impl(string_view body, error_code&) {
  request_.body.append(body.data(), body.size());
  return body.size();
}

std::size_t RequestParser::on_chunk_body_impl(std::uint64_t, string_view body, error_code& ec) {
  return on_body_impl(body, ec);
}

absl::StatusOr<HttpRequest> RequestParser::Release() {
  const absl::string_view raw = absl::string_view(request_line_).substr(target_at_);
  auto target = boost::urls::parse_origin_form({raw.data(), raw.size()});
  if (!target) return InvalidArgument("malformed request target");
  request_.path = std::string(target->encoded_path());
  request_.segments.reserve(8);
  for (auto segment : target->segments()) request_.segments.push_back(std::string(segment));
  for (auto param : target->params()) request_.query[param.key] = param.value;
  return std::move(request_);
}

}  // namespace keel::server
