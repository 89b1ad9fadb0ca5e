// `keel replay`: reads a stream's history from a running daemon and prints
// the events as JSON lines, exactly as the daemon sent them.
//
//   keel replay --stream orders --after earliest --limit 100
//   keel replay --stream orders --after-time 2026-11-30T12:00:00Z --all
//   keel replay --stream orders --after-sequence 41 --limit 10
//   keel replay --stream orders --all --type order.   # every page, following `next`
//
// Without --all one page is printed and, when there is more, the cursor to
// continue from goes to stderr.
#include <boost/json.hpp>
#include <boost/program_options/value_semantic.hpp>
#include <optional>
#include <ostream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "keel/cmd/keel/client/errors.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/client/raw_json.h"
#include "keel/cmd/keel/command.h"

namespace keel::cli {
namespace {

namespace json = boost::json;

struct Page {
  std::vector<std::string> events;  // Raw event JSON.
  std::string next;
  bool reached_end = true;
};

absl::StatusOr<Page> ParsePage(const std::string& body) {
  boost::system::error_code ec;
  json::value root = json::parse(body, ec);
  const json::object* object = !ec && root.is_object() ? &root.get_object() : nullptr;
  const json::value* next = object != nullptr ? object->if_contains("next") : nullptr;
  const json::value* end = object != nullptr ? object->if_contains("reachedEnd") : nullptr;
  std::optional<absl::string_view> events = client::RawMember(body, "events");
  if (next == nullptr || !next->is_string() || end == nullptr || !end->is_bool() || !events) {
    return absl::InternalError(
        absl::StrCat("unexpected page from the daemon: ", body.substr(0, 200)));
  }
  Page page;
  for (absl::string_view event : client::RawElements(*events)) page.events.emplace_back(event);
  page.next = std::string(next->get_string());
  page.reached_end = end->get_bool();
  return page;
}

class ReplayCommand : public Command {
 public:
  absl::string_view name() const override { return "replay"; }
  absl::string_view summary() const override {
    return "print a stream's events from a running daemon as JSON lines";
  }
  void AddOptions(po::options_description& options) const override {
    AddServerOption(options);
    options.add_options()("stream", po::value<std::string>(), "stream to read (required)")(
        "after", po::value<std::string>()->default_value("earliest"),
        "read after this position: earliest, latest or a cursor")(
        "after-time", po::value<std::string>(),
        "start at the first event published at or after this RFC 3339 time "
        "(instead of --after)")("after-sequence", po::value<uint64_t>(),
                                "start after this sequence number (instead of --after)")(
        "until", po::value<std::string>(), "stop at this cursor (inclusive)")(
        "limit", po::value<size_t>(), "events per page (server default 100, max 10000)")(
        "tenant", po::value<std::string>(), "only events of this tenant")(
        "type", po::value<std::string>(), "only events whose type starts with this")(
        "all", po::bool_switch(), "follow `next` until the end of the stream (or --until)");
  }

  int Run(const po::variables_map& vars, CommandIo& io) const override {
    absl::StatusOr<client::ServerAddress> server =
        client::ParseServerAddress(vars["server"].as<std::string>());
    if (!server.ok()) {
      return UsageError(io, "keel replay", server.status().message());
    }
    if (!vars.count("stream")) {
      return UsageError(io, "keel replay", "--stream is required");
    }
    const std::string stream = vars["stream"].as<std::string>();
    const bool all = vars["all"].as<bool>();
    if (vars.count("after-time") + vars.count("after-sequence") + !vars["after"].defaulted() > 1) {
      return UsageError(io, "keel replay",
                        "give one of --after, --after-time and --after-sequence");
    }
    std::string after = vars["after"].as<std::string>();
    // The first page may start at a time or a sequence; later pages
    // continue from `next`.
    std::optional<std::pair<std::string, std::string>> first_start;
    if (vars.count("after-time"))
      first_start.emplace("after_time", vars["after-time"].as<std::string>());
    if (vars.count("after-sequence")) {
      first_start.emplace("after_sequence", absl::StrCat(vars["after-sequence"].as<uint64_t>()));
    }
    client::HttpClient http(server->host, server->port, ClientOptionsFrom(vars));
    while (true) {
      std::vector<std::pair<std::string, std::string>> query;
      if (first_start) {
        query.push_back(*std::exchange(first_start, std::nullopt));
      } else {
        query.emplace_back("after", after);
      }
      if (vars.count("until")) query.emplace_back("until", vars["until"].as<std::string>());
      if (vars.count("limit"))
        query.emplace_back("limit", absl::StrCat(vars["limit"].as<size_t>()));
      if (vars.count("tenant")) query.emplace_back("tenant", vars["tenant"].as<std::string>());
      if (vars.count("type")) query.emplace_back("type", vars["type"].as<std::string>());
      absl::StatusOr<client::ClientResponse> response =
          http.Get(client::BuildTarget({"v1", "streams", stream, "events"}, query));
      absl::Status status =
          response.ok() ? client::ErrorFromResponse(*response) : response.status();
      absl::StatusOr<Page> page =
          status.ok() ? ParsePage(response->body) : absl::StatusOr<Page>(status);
      if (!page.ok()) {
        io.err << "keel replay: " << client::DescribeError(page.status()) << "\n";
        return kExitFailure;
      }
      for (const std::string& event : page->events) io.out << event << "\n";
      io.out.flush();
      if (page->reached_end) break;
      if (!all) {
        io.err << "keel replay: more events; continue with --after " << page->next << "\n";
        break;
      }
      if (page->next == after && page->events.empty()) {
        io.err << "keel replay: the daemon's cursor did not advance; stopping\n";
        return kExitFailure;
      }
      after = page->next;
    }
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> NewReplayCommand() { return std::make_unique<ReplayCommand>(); }

}  // namespace keel::cli
