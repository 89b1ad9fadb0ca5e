#include "keel/cmd/keel/api_call.h"

#include <ostream>

#include <boost/json.hpp>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/client/errors.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/client/raw_json.h"
#include "keel/core/json_syntax.h"

namespace keel::cli {

int RunApiCall(const ApiCall& call, CommandIo& io) {
  absl::StatusOr<client::ServerAddress> server = client::ParseServerAddress(call.server);
  if (!server.ok()) {
    return UsageError(io, call.command, server.status().message());
  }
  client::HttpClient http(server->host, server->port, call.client);
  absl::StatusOr<client::ClientResponse> response =
      call.method == "POST" ? http.PostJson(call.target, call.body, call.headers)
                            : http.Request(call.method, call.target, call.body, call.headers);
  absl::Status status = response.ok() ? client::ErrorFromResponse(*response) : response.status();
  std::optional<absl::string_view> lines;
  if (status.ok()) {
    boost::system::error_code ec;
    // As deep as the documents the daemon stores, inside their envelope.
    boost::json::parse_options options;
    options.max_depth = kMaxJsonDepth + 4;
    boost::json::value root = boost::json::parse(response->body, ec, {}, options);
    if (!call.lines_of.empty() && !ec) lines = client::RawMember(response->body, call.lines_of);
    if (ec || !root.is_object() || (!call.lines_of.empty() && !lines)) {
      status = absl::InternalError(
          absl::StrCat("unexpected answer from the daemon: ", response->body.substr(0, 200)));
    }
  }
  if (!status.ok()) {
    io.err << call.command << ": " << client::DescribeError(status) << "\n";
    return kExitFailure;
  }
  if (!lines) {
    io.out << response->body << "\n";
    return kExitOk;
  }
  for (absl::string_view element : client::RawElements(*lines)) io.out << element << "\n";
  return kExitOk;
}

}  // namespace keel::cli
