// `keel streams`: lists a running daemon's streams (one JSON object per
// line), prints the bounds of one stream, or deletes one for good.
//
//   keel streams --prefix orders.
//   keel streams orders
//   keel streams delete orders
#include <boost/json.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/api_call.h"
#include "keel/cmd/keel/client/errors.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/client/raw_json.h"
#include "keel/cmd/keel/command.h"

namespace keel::cli {
namespace {

namespace json = boost::json;

class StreamsCommand : public Command {
 public:
  absl::string_view name() const override { return "streams"; }
  absl::string_view summary() const override {
    return "list a running daemon's streams, show the bounds of one (keel streams NAME) or "
           "delete one with its groups and dead letters (keel streams delete NAME)";
  }
  void AddOptions(po::options_description& options) const override {
    AddServerOption(options);
    options.add_options()("prefix", po::value<std::string>(),
                          "only streams whose name starts with this")("limit", po::value<size_t>(),
                                                                      "at most this many streams")(
        "stream", po::value<std::string>(), "show this stream's bounds (also positional)")(
        "name", po::value<std::string>(),
        "after 'delete': the stream (or topic) to delete (positional)");
  }
  std::vector<std::string> Positionals() const override { return {"stream", "name"}; }

  int Run(const po::variables_map& vars, CommandIo& io) const override {
    absl::StatusOr<client::ServerAddress> server =
        client::ParseServerAddress(vars["server"].as<std::string>());
    if (!server.ok()) {
      return UsageError(io, "keel streams", server.status().message());
    }
    if (vars.count("name")) return Delete(vars, io);
    const bool one = vars.count("stream") > 0;
    if (one && (vars.count("prefix") || vars.count("limit"))) {
      return UsageError(io, "keel streams",
                        "--prefix and --limit list streams; drop them to show one stream");
    }
    std::string target;
    if (one) {
      target = client::BuildTarget({"v1", "streams", vars["stream"].as<std::string>()});
    } else {
      std::vector<std::pair<std::string, std::string>> query;
      if (vars.count("prefix")) query.emplace_back("prefix", vars["prefix"].as<std::string>());
      if (vars.count("limit"))
        query.emplace_back("limit", absl::StrCat(vars["limit"].as<size_t>()));
      target = client::BuildTarget({"v1", "streams"}, query);
    }
    client::HttpClient http(server->host, server->port, ClientOptionsFrom(vars));
    absl::StatusOr<client::ClientResponse> response = http.Get(target);
    absl::Status status = response.ok() ? client::ErrorFromResponse(*response) : response.status();
    if (status.ok()) {
      boost::system::error_code ec;
      json::value root = json::parse(response->body, ec);
      if (ec || !root.is_object() || (!one && !client::RawMember(response->body, "streams"))) {
        status = absl::InternalError(
            absl::StrCat("unexpected answer from the daemon: ", response->body.substr(0, 200)));
      }
    }
    if (!status.ok()) {
      io.err << "keel streams: " << client::DescribeError(status) << "\n";
      return kExitFailure;
    }
    if (one) {
      io.out << response->body << "\n";
    } else {
      for (absl::string_view info :
           client::RawElements(*client::RawMember(response->body, "streams"))) {
        io.out << info << "\n";
      }
    }
    return kExitOk;
  }

 private:
  static int Delete(const po::variables_map& vars, CommandIo& io) {
    if (vars.count("stream") == 0 || vars["stream"].as<std::string>() != "delete") {
      return UsageError(io, "keel streams",
                        "give one stream to show, or 'delete NAME' to delete one");
    }
    ApiCall call;
    call.command = "keel streams";
    call.server = vars["server"].as<std::string>();
    call.method = "DELETE";
    call.target = client::BuildTarget({"v1", "streams", vars["name"].as<std::string>()});
    call.client = ClientOptionsFrom(vars);
    return RunApiCall(call, io);
  }
};

}  // namespace

std::unique_ptr<Command> NewStreamsCommand() { return std::make_unique<StreamsCommand>(); }

}  // namespace keel::cli
