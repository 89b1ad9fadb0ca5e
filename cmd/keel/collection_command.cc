// `keel collection`: documents of a collection on a running daemon, over
// HTTP (rfcs/0009-collections.md). Prints the daemon's JSON answer
// (`history`: one version per line, oldest first).
//
//   keel collection put     --collection users --id u1 --data '{"name":"Ada"}' [--if-match 3]
//   keel collection get     --collection users --id u1 [--at CURSOR|RFC3339]
//   keel collection delete  --collection users --id u1 [--if-match 4]
//   keel collection history --collection users --id u1
//
// `--if-match N` writes only if the document is at version N (0: it must
// not exist yet); a stale version exits 1 with the daemon's conflict, which
// names the current one.
#include <boost/program_options/value_semantic.hpp>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/api_call.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/command.h"
#include "keel/core/json_syntax.h"

namespace keel::cli {
namespace {

constexpr char kName[] = "keel collection";

// If-Match for a version, If-None-Match: * for 0 (the document must not
// exist), as the daemon reads them.
client::Headers ExpectedVersionHeaders(const po::variables_map& vars) {
  if (!vars.count("if-match")) return {};
  const uint64_t version = vars["if-match"].as<uint64_t>();
  if (version == 0) return {{"If-None-Match", "*"}};
  return {{"If-Match", absl::StrCat("\"", version, "\"")}};
}

class CollectionCommand : public Command {
 public:
  absl::string_view name() const override { return "collection"; }
  absl::string_view summary() const override {
    return "put, get, delete documents of a collection on a running daemon, or list a history";
  }
  void AddOptions(po::options_description& options) const override {
    AddServerOption(options);
    options.add_options()
        ("action", po::value<std::string>(), "put | get | delete | history (positional)")
        ("collection", po::value<std::string>(), "the collection, also its stream (required)")
        ("id", po::value<std::string>(), "the document's id (required)")
        ("data", po::value<std::string>(), "put: the document as JSON (default: stdin)")
        ("data-file", po::value<std::string>(), "put: read the document from this file")
        ("if-match", po::value<uint64_t>(),
         "put, delete: only if the document is at this version (0: absent)")
        ("at", po::value<std::string>(), "get: as of a change event's cursor or an RFC 3339 time");
  }
  std::vector<std::string> Positionals() const override { return {"action"}; }

  int Run(const po::variables_map& vars, CommandIo& io) const override {
    auto usage = [&io](absl::string_view message) { return UsageError(io, kName, message); };
    const std::string action = ActionIn(vars, {"put", "get", "delete", "history"});
    if (action.empty()) return usage("give an action: put, get, delete or history");
    if (!vars.count("collection")) return usage("--collection is required");
    if (!vars.count("id")) return usage("--id is required");
    const bool writes = action == "put" || action == "delete";
    if (vars.count("if-match") && !writes) return usage("--if-match is for put and delete");
    if (vars.count("at") && action != "get") return usage("--at is for get");
    if ((vars.count("data") || vars.count("data-file")) && action != "put") {
      return usage("--data and --data-file are for put");
    }
    std::vector<std::string> path = {"v1", "collections", vars["collection"].as<std::string>(),
                                     "docs", vars["id"].as<std::string>()};
    ApiCall call{.command = kName,
                 .server = vars["server"].as<std::string>(),
                 .method = "GET",
                 .client = ClientOptionsFrom(vars),
                 .headers = ExpectedVersionHeaders(vars)};
    std::vector<std::pair<std::string, std::string>> query;
    if (action == "put") {
      absl::StatusOr<std::string> document = DataTextFrom(vars);
      if (!document.ok()) return usage(document.status().message());
      std::string error;
      if (!IsJsonText(*document, &error)) return usage("the document is not JSON: " + error);
      call.method = "PUT";
      call.body = *std::move(document);
      call.headers.emplace_back("Content-Type", "application/json");
    } else if (action == "delete") {
      call.method = "DELETE";
    } else if (action == "history") {
      path.push_back("history");
      call.lines_of = "versions";
    } else if (vars.count("at")) {
      query.emplace_back("at", vars["at"].as<std::string>());
    }
    call.target = client::BuildTarget(path, query);
    return RunApiCall(call, io);
  }
};

}  // namespace

std::unique_ptr<Command> NewCollectionCommand() { return std::make_unique<CollectionCommand>(); }

}  // namespace keel::cli
