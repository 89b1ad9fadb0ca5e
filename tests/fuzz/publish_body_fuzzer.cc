// The JSON body of a publish (POST /v1/streams/{stream}/events) with its
// Idempotency-Key and Keel-Expected-Last-Sequence headers: the parser
// answers every body with events or an InvalidArgument error, its fast path
// for plain single events agrees with the general parser on every body it
// accepts, and what it accepts is JSON.
//
// Input: the idempotency key, a newline, the expected-sequence header, a
// newline, then the body (missing parts are empty).
#include <boost/json/parse.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "absl/strings/string_view.h"
#include "keel/cmd/keel/server/publish_body.h"
#include "keel/core/errors.h"

namespace {

absl::string_view TakeLine(absl::string_view& rest) {
  const size_t newline = rest.find('\n');
  const absl::string_view line = rest.substr(0, newline);
  rest.remove_prefix(newline == absl::string_view::npos ? rest.size() : newline + 1);
  return line;
}

bool SameBody(const keel::server::PublishBody& a, const keel::server::PublishBody& b) {
  return a.events == b.events && a.partition_keys == b.partition_keys &&
         a.expected_last_sequence == b.expected_last_sequence && a.was_array == b.was_array;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view rest(reinterpret_cast<const char*>(data), size);
  const absl::string_view key = TakeLine(rest);
  const absl::string_view expected = TakeLine(rest);
  const absl::string_view body = rest;
  absl::StatusOr<keel::server::PublishBody> parsed =
      keel::server::ParsePublishBody(body, key, expected);
  absl::StatusOr<keel::server::PublishBody> general =
      keel::server::ParsePublishBodyGeneral(body, key, expected);
  if (parsed.ok() != general.ok()) std::abort();
  if (!parsed.ok()) {
    if (parsed.status().code() != absl::StatusCode::kInvalidArgument) std::abort();
    return 0;
  }
  if (!SameBody(*parsed, *general)) std::abort();
  boost::system::error_code ec;
  boost::json::parse(boost::json::string_view(body.data(), body.size()), ec);
  if (ec) std::abort();  // Accepted a body that is not JSON.
  return 0;
}
