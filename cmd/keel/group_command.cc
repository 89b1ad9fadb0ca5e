// `keel group`: a consumer group of a stream on a running daemon, over HTTP
// (rfcs/0005-consumer-groups.md). Prints the daemon's JSON answer (`list`:
// one group per line).
//
//   keel group consume --stream orders --group billing --limit 10 --lease-ms 30000
//   keel group commit  --stream orders --group billing --cursor C --lease-token 7
//   keel group seek    --stream orders --group billing --to earliest
//   keel group seek    --stream orders --group billing --time 2026-11-30T12:00:00Z
//   keel group show    --stream orders --group billing
//   keel group list    --stream orders
#include <boost/json.hpp>
#include <boost/program_options/value_semantic.hpp>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/api_call.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/command.h"

namespace keel::cli {
namespace {

namespace json = boost::json;

constexpr char kName[] = "keel group";

// The body of `consume`, `commit` or `seek` from the flags; "" with a
// message in `error` when a flag is missing.
std::string BodyOf(const std::string& action, const po::variables_map& vars, std::string& error) {
  json::object body;
  if (action == "consume") {
    if (vars.count("limit")) body["limit"] = vars["limit"].as<size_t>();
    if (vars.count("lease-ms")) body["leaseMs"] = vars["lease-ms"].as<uint64_t>();
    if (vars.count("start")) body["start"] = vars["start"].as<std::string>();
  } else if (action == "commit") {
    if (!vars.count("cursor") || !vars.count("lease-token")) {
      error = "commit needs --cursor and --lease-token";
      return "";
    }
    body["cursor"] = vars["cursor"].as<std::string>();
    body["token"] = vars["lease-token"].as<uint64_t>();
  } else {
    if (vars.count("to") == vars.count("time")) {
      error = "seek needs either --to (earliest, latest or a cursor) or --time (RFC 3339)";
      return "";
    }
    if (vars.count("to")) body["to"] = vars["to"].as<std::string>();
    if (vars.count("time")) body["time"] = vars["time"].as<std::string>();
  }
  return json::serialize(body);
}

class GroupCommand : public Command {
 public:
  absl::string_view name() const override { return "group"; }
  absl::string_view summary() const override {
    return "consume, commit, seek, show or list consumer groups on a running daemon";
  }
  void AddOptions(po::options_description& options) const override {
    AddServerOption(options);
    options.add_options()
        ("action", po::value<std::string>(), "consume | commit | seek | show | list (positional)")
        ("stream", po::value<std::string>(), "the stream (required)")
        ("group", po::value<std::string>(), "the consumer group (all but list)")
        ("limit", po::value<size_t>(), "consume: at most this many events")
        ("lease-ms", po::value<uint64_t>(), "consume: lease length in milliseconds")
        ("start", po::value<std::string>(), "consume: where a new group starts, earliest|latest")
        ("cursor", po::value<std::string>(), "commit: the cursor to commit")
        ("lease-token", po::value<uint64_t>(),
         "commit: the lease token of the consume (not --auth-token, the daemon's bearer token)")
        ("to", po::value<std::string>(), "seek: earliest, latest or a cursor")
        ("time", po::value<std::string>(), "seek: an RFC 3339 time");
  }
  std::vector<std::string> Positionals() const override { return {"action"}; }

  int Run(const po::variables_map& vars, CommandIo& io) const override {
    auto usage = [&io](absl::string_view message) { return UsageError(io, kName, message); };
    const std::string action = ActionIn(vars, {"consume", "commit", "seek", "show", "list"});
    if (action.empty()) return usage("give an action: consume, commit, seek, show or list");
    if (!vars.count("stream")) return usage("--stream is required");
    const std::string stream = vars["stream"].as<std::string>();
    ApiCall call{kName, vars["server"].as<std::string>(), "GET", "", "", "",
                 ClientOptionsFrom(vars)};
    if (action == "list") {
      call.target = client::BuildTarget({"v1", "streams", stream, "groups"});
      call.lines_of = "groups";
      return RunApiCall(call, io);
    }
    if (!vars.count("group")) return usage("--group is required");
    const std::string group = vars["group"].as<std::string>();
    if (action == "show") {
      call.target = client::BuildTarget({"v1", "streams", stream, "groups", group});
      return RunApiCall(call, io);
    }
    std::string error;
    call.body = BodyOf(action, vars, error);
    if (!error.empty()) return usage(error);
    call.method = "POST";
    call.target =
        client::BuildTarget({"v1", "streams", stream, "groups", absl::StrCat(group, ":", action)});
    return RunApiCall(call, io);
  }
};

}  // namespace

std::unique_ptr<Command> NewGroupCommand() { return std::make_unique<GroupCommand>(); }

}  // namespace keel::cli
