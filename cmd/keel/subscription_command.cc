// `keel subscription`: push subscriptions of a running daemon, over HTTP
// (rfcs/0010-push-subscriptions.md). Prints the daemon's JSON answer
// (`list`: one subscription per line).
//
//   keel subscription create   --name billing --streams 'orders.*'
//                              --endpoint https://hooks.example/keel --secret S [options]
//   keel subscription list
//   keel subscription describe --name billing
//   keel subscription pause    --name billing
//   keel subscription resume   --name billing
//   keel subscription secrets  --name billing --secret NEW [--secret OLD]
//   keel subscription redrive  --name billing [--from-sequence N] [--to-sequence M]
//   keel subscription delete   --name billing
#include <boost/json.hpp>
#include <boost/program_options/value_semantic.hpp>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/api_call.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/command.h"

namespace keel::cli {
namespace {

namespace json = boost::json;

constexpr char kName[] = "keel subscription";

json::array SecretsOf(const po::variables_map& vars) {
  json::array secrets;
  if (vars.count("secret")) {
    for (const std::string& secret : vars["secret"].as<std::vector<std::string>>()) {
      secrets.emplace_back(secret);
    }
  }
  return secrets;
}

// The declaration `create` sends; the daemon validates it.
std::string CreateBody(const po::variables_map& vars) {
  json::object body;
  body["name"] = vars["name"].as<std::string>();
  for (const char* flag : {"streams", "endpoint"}) body[flag] = vars[flag].as<std::string>();
  if (vars.count("type-prefix")) body["typePrefix"] = vars["type-prefix"].as<std::string>();
  if (vars.count("tenant")) body["tenant"] = vars["tenant"].as<std::string>();
  if (vars.count("batch-size")) body["batchSize"] = vars["batch-size"].as<uint64_t>();
  if (vars.count("linger-ms")) body["lingerMs"] = vars["linger-ms"].as<uint64_t>();
  if (vars.count("timeout-ms")) body["timeoutMs"] = vars["timeout-ms"].as<uint64_t>();
  if (vars.count("concurrency")) body["concurrency"] = vars["concurrency"].as<uint64_t>();
  if (vars.count("start")) body["start"] = vars["start"].as<std::string>();
  if (vars["allow-self"].as<bool>()) body["allowSelf"] = true;
  json::object retry;
  if (vars.count("max-attempts")) retry["maxAttempts"] = vars["max-attempts"].as<uint64_t>();
  if (vars.count("initial-backoff-ms")) {
    retry["initialBackoffMs"] = vars["initial-backoff-ms"].as<uint64_t>();
  }
  if (vars.count("max-backoff-ms")) retry["maxBackoffMs"] = vars["max-backoff-ms"].as<uint64_t>();
  if (!retry.empty()) body["retry"] = std::move(retry);
  json::object circuit;
  if (vars.count("circuit-failures")) {
    circuit["failureThreshold"] = vars["circuit-failures"].as<uint64_t>();
  }
  if (vars.count("circuit-open-ms")) circuit["openMs"] = vars["circuit-open-ms"].as<uint64_t>();
  if (!circuit.empty()) body["circuit"] = std::move(circuit);
  json::object dead_letters;
  if (vars.count("dead-letter-max-age")) {
    dead_letters["maxAge"] = vars["dead-letter-max-age"].as<std::string>();
  }
  if (vars.count("dead-letter-max-events")) {
    dead_letters["maxEvents"] = vars["dead-letter-max-events"].as<uint64_t>();
  }
  if (!dead_letters.empty()) body["deadLetterRetention"] = std::move(dead_letters);
  body["secrets"] = SecretsOf(vars);
  return json::serialize(body);
}

// The range `redrive` sends: "" for every dead letter not redriven yet.
std::string RedriveBody(const po::variables_map& vars) {
  json::object body;
  if (vars.count("from-sequence")) body["fromSequence"] = vars["from-sequence"].as<uint64_t>();
  if (vars.count("to-sequence")) body["toSequence"] = vars["to-sequence"].as<uint64_t>();
  return body.empty() ? "" : json::serialize(body);
}

class SubscriptionCommand : public Command {
 public:
  absl::string_view name() const override { return "subscription"; }
  absl::string_view summary() const override {
    return "create, list, describe, pause, resume, rotate secrets of, redrive the dead letters "
           "of or delete push subscriptions on a running daemon";
  }
  void AddOptions(po::options_description& options) const override {
    AddServerOption(options);
    options.add_options()(
        "action", po::value<std::string>(),
        "create | list | describe | pause | resume | secrets | redrive | delete (positional)")(
        "name", po::value<std::string>(), "the subscription (all but list)")(
        "streams", po::value<std::string>(),
        "create: the streams, a name, a prefix ('orders.*') or a glob ('*.eu')")(
        "endpoint", po::value<std::string>(), "create: the http:// or https:// URL to POST to")(
        "secret", po::value<std::vector<std::string>>()->composing(),
        "create, secrets: a signing secret (at least 16 bytes); twice while rotating: new first")(
        "type-prefix", po::value<std::string>(), "create: only events whose type starts so")(
        "tenant", po::value<std::string>(), "create: only this tenant's events")(
        "batch-size", po::value<uint64_t>(), "create: events per POST (default 100)")(
        "linger-ms", po::value<uint64_t>(), "create: how long a batch may wait to fill")(
        "timeout-ms", po::value<uint64_t>(), "create: timeout of one POST (default 10000)")(
        "max-attempts", po::value<uint64_t>(), "create: POSTs of a batch before dead letters")(
        "initial-backoff-ms", po::value<uint64_t>(), "create: backoff after the first failure")(
        "max-backoff-ms", po::value<uint64_t>(), "create: the backoff's cap")(
        "concurrency", po::value<uint64_t>(),
        "create: batches in flight at once, each of a different stream (default 1)")(
        "circuit-failures", po::value<uint64_t>(),
        "create: endpoint failures in a row that open the circuit (default 5; 0: never)")(
        "circuit-open-ms", po::value<uint64_t>(),
        "create: how long an open circuit holds POSTs back before a probe (default 30000)")(
        "dead-letter-max-age", po::value<std::string>(),
        "create: how long dead letters are kept ('168h'; default: the stream's policy)")(
        "dead-letter-max-events", po::value<uint64_t>(),
        "create: how many dead letters are kept (default: the stream's policy)")(
        "start", po::value<std::string>(), "create: earliest (default) or latest")(
        "allow-self", po::bool_switch()->default_value(false),
        "create: allow the daemon's own address as the endpoint")(
        "from-sequence", po::value<uint64_t>(),
        "redrive: the first dead letter (its sequence on the dead-letter stream) to send again; "
        "default: the first not redriven yet")(
        "to-sequence", po::value<uint64_t>(),
        "redrive: the last dead letter to send again; default: the newest");
  }
  std::vector<std::string> Positionals() const override { return {"action"}; }

  int Run(const po::variables_map& vars, CommandIo& io) const override {
    auto usage = [&io](absl::string_view message) { return UsageError(io, kName, message); };
    const std::string action = ActionIn(
        vars, {"create", "list", "describe", "pause", "resume", "secrets", "redrive", "delete"});
    if (action.empty()) {
      return usage(
          "give an action: create, list, describe, pause, resume, secrets, redrive or delete");
    }
    ApiCall call{kName, vars["server"].as<std::string>(), "GET", "", "",
                 "",    ClientOptionsFrom(vars)};
    if (action == "list") {
      call.target = client::BuildTarget({"v1", "subscriptions"});
      call.lines_of = "subscriptions";
      return RunApiCall(call, io);
    }
    if (!vars.count("name")) return usage("--name is required");
    const std::string name = vars["name"].as<std::string>();
    if (action == "create") {
      if (!vars.count("streams") || !vars.count("endpoint") || !vars.count("secret")) {
        return usage("create needs --streams, --endpoint and --secret");
      }
      call.method = "POST";
      call.target = client::BuildTarget({"v1", "subscriptions"});
      call.body = CreateBody(vars);
      return RunApiCall(call, io);
    }
    if (action == "describe") {
      call.target = client::BuildTarget({"v1", "subscriptions", name});
      return RunApiCall(call, io);
    }
    if (action == "delete") {
      call.method = "DELETE";
      call.target = client::BuildTarget({"v1", "subscriptions", name});
      return RunApiCall(call, io);
    }
    if (action == "secrets") {
      if (!vars.count("secret")) return usage("secrets needs --secret (twice while rotating)");
      json::object body;
      body["secrets"] = SecretsOf(vars);
      call.body = json::serialize(body);
    }
    if (action == "redrive") call.body = RedriveBody(vars);
    call.method = "POST";
    call.target = client::BuildTarget({"v1", "subscriptions", absl::StrCat(name, ":", action)});
    return RunApiCall(call, io);
  }
};

}  // namespace

std::unique_ptr<Command> NewSubscriptionCommand() {
  return std::make_unique<SubscriptionCommand>();
}

}  // namespace keel::cli
