// `keel publish`: publishes one event to a running daemon over HTTP and
// prints the receipt JSON.
//
//   keel publish --stream orders --type order.created --data '{"id":1}'
//   echo '{"id":2}' | keel publish --stream orders --type order.created
//   keel publish --stream clicks --partition-key user-7 --type click --data 1
#include <ostream>
#include <sstream>

#include <boost/json.hpp>
#include <boost/program_options/value_semantic.hpp>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/client/errors.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/command.h"

namespace keel::cli {
namespace {

namespace json = boost::json;

class PublishCommand : public Command {
 public:
  absl::string_view name() const override { return "publish"; }
  absl::string_view summary() const override {
    return "publish one event to a running daemon and print its receipt";
  }
  void AddOptions(po::options_description& options) const override {
    AddServerOption(options);
    options.add_options()
        ("stream", po::value<std::string>(), "stream to publish to (required)")
        ("type", po::value<std::string>(), "event type, e.g. order.created (required)")
        ("data", po::value<std::string>(), "event data as JSON (default: read from stdin)")
        ("data-file", po::value<std::string>(), "read the event data (JSON) from this file")
        ("tenant", po::value<std::string>(), "tenant of the event")
        ("attr", po::value<std::vector<std::string>>()->composing(),
         "attribute as key=value; repeatable")
        ("idempotency-key", po::value<std::string>(),
         "idempotency key: a retry with the same key appends nothing")
        ("expected-last-sequence", po::value<uint64_t>(),
         "append only if the stream's last sequence is this (else conflict, exit 1)")
        ("partition-key", po::value<std::string>(),
         "for a topic declared with partitions: the key that picks the partition");
  }

  int Run(const po::variables_map& vars, CommandIo& io) const override {
    auto usage = [&io](absl::string_view message) {
      return UsageError(io, "keel publish", message);
    };
    absl::StatusOr<client::ServerAddress> server =
        client::ParseServerAddress(vars["server"].as<std::string>());
    if (!server.ok()) return usage(server.status().message());
    if (!vars.count("stream")) return usage("--stream is required");
    if (!vars.count("type")) return usage("--type is required");
    absl::StatusOr<std::string> data_text = DataTextFrom(vars);
    if (!data_text.ok()) return usage(data_text.status().message());
    boost::system::error_code ec;
    json::value data = json::parse(*data_text, ec);
    if (ec) return usage(absl::StrCat("the event data is not valid JSON: ", ec.message()));

    json::object body;
    body["type"] = vars["type"].as<std::string>();
    if (vars.count("tenant")) body["tenant"] = vars["tenant"].as<std::string>();
    if (vars.count("partition-key")) body["partitionKey"] = vars["partition-key"].as<std::string>();
    if (vars.count("expected-last-sequence")) {
      body["expectedLastSequence"] = vars["expected-last-sequence"].as<uint64_t>();
    }
    body["data"] = std::move(data);
    if (vars.count("attr")) {
      json::object attributes;
      for (const std::string& assignment : vars["attr"].as<std::vector<std::string>>()) {
        const size_t eq = assignment.find('=');
        if (eq == std::string::npos || eq == 0) {
          return usage(absl::StrCat("--attr wants key=value, got '", assignment, "'"));
        }
        attributes[assignment.substr(0, eq)] = assignment.substr(eq + 1);
      }
      body["attributes"] = std::move(attributes);
    }
    client::Headers headers;
    if (vars.count("idempotency-key")) {
      headers.emplace_back("Idempotency-Key", vars["idempotency-key"].as<std::string>());
    }

    client::HttpClient http(server->host, server->port, ClientOptionsFrom(vars));
    absl::StatusOr<client::ClientResponse> response = http.PostJson(
        client::BuildTarget({"v1", "streams", vars["stream"].as<std::string>(), "events"}),
        json::serialize(body), headers);
    absl::Status status =
        response.ok() ? client::ErrorFromResponse(*response) : response.status();
    if (!status.ok()) {
      io.err << "keel publish: " << client::DescribeError(status) << "\n";
      return kExitFailure;
    }
    io.out << response->body << "\n";
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> NewPublishCommand() { return std::make_unique<PublishCommand>(); }

}  // namespace keel::cli
