// `keel declare`: declares a stream or topic on a running daemon (PUT
// /v1/streams/{stream}) and prints the policy in force. The policy is given
// in the config file's text form, checked here before anything is sent.
//
//   keel declare --stream orders --policy "max_age=168h max_events=1000000"
//   keel declare --stream clicks --policy "partitions=8"
//
// Declaring the same policy again succeeds; a different one fails with
// resource_drift naming the differing keys (exit 1).
#include <ostream>

#include <boost/program_options/value_semantic.hpp>

#include "keel/cmd/keel/client/errors.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/command.h"
#include "keel/cmd/keel/server/policy_json.h"
#include "keel/core/stream_policy.h"

namespace keel::cli {
namespace {

class DeclareCommand : public Command {
 public:
  absl::string_view name() const override { return "declare"; }
  absl::string_view summary() const override {
    return "declare a stream's retention, payload limit, dedupe window or partitions";
  }
  void AddOptions(po::options_description& options) const override {
    AddServerOption(options);
    options.add_options()
        ("stream", po::value<std::string>(), "stream or topic to declare (required)")
        ("policy", po::value<std::string>()->default_value(""),
         "'key=value ...' with keys max_age, max_bytes, max_events, max_payload_bytes, "
         "dedupe_window, dead_letter.max_age, dead_letter.max_bytes, dead_letter.max_events, "
         "partitions (absent keys take their defaults)");
  }

  int Run(const po::variables_map& vars, CommandIo& io) const override {
    absl::StatusOr<client::ServerAddress> server =
        client::ParseServerAddress(vars["server"].as<std::string>());
    absl::StatusOr<StreamPolicy> policy = StreamPolicy::Parse(vars["policy"].as<std::string>());
    for (const absl::Status& status : {server.status(), policy.status()}) {
      if (!status.ok()) {
        return UsageError(io, "keel declare", status.message());
      }
    }
    if (!vars.count("stream")) {
      return UsageError(io, "keel declare", "--stream is required");
    }
    client::HttpClient http(server->host, server->port, ClientOptionsFrom(vars));
    absl::StatusOr<client::ClientResponse> response =
        http.Request("PUT", client::BuildTarget({"v1", "streams", vars["stream"].as<std::string>()}),
                     server::PolicyJson(*policy), {{"Content-Type", "application/json"}});
    absl::Status status = response.ok() ? client::ErrorFromResponse(*response) : response.status();
    if (!status.ok()) {
      io.err << "keel declare: " << client::DescribeError(status) << "\n";
      return kExitFailure;
    }
    io.out << response->body << "\n";
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> NewDeclareCommand() { return std::make_unique<DeclareCommand>(); }

}  // namespace keel::cli
