// `keel dead-letters`: a stream's dead letters on a running daemon, over
// HTTP (rfcs/0005-consumer-groups.md): list them (one JSON object per
// line), show one, or republish one onto its stream (prints the receipt).
//
//   keel dead-letters list --stream orders [--after CURSOR] [--limit N]
//   keel dead-letters show --stream orders --sequence 3
//   keel dead-letters republish --stream orders --sequence 3
#include <boost/program_options/value_semantic.hpp>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/api_call.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/command.h"

namespace keel::cli {
namespace {

constexpr char kName[] = "keel dead-letters";

class DeadLettersCommand : public Command {
 public:
  absl::string_view name() const override { return "dead-letters"; }
  absl::string_view summary() const override {
    return "list, show or republish a stream's dead letters on a running daemon";
  }
  void AddOptions(po::options_description& options) const override {
    AddServerOption(options);
    options.add_options()
        ("action", po::value<std::string>(), "list | show | republish (positional)")
        ("stream", po::value<std::string>(), "the source stream (required)")
        ("after", po::value<std::string>(), "list: after this position on the dead-letter stream")
        ("limit", po::value<size_t>(), "list: at most this many dead letters")
        ("sequence", po::value<uint64_t>(), "show, republish: the dead letter's sequence");
  }
  std::vector<std::string> Positionals() const override { return {"action"}; }

  int Run(const po::variables_map& vars, CommandIo& io) const override {
    auto usage = [&io](absl::string_view message) { return UsageError(io, kName, message); };
    const std::string action = ActionIn(vars, {"list", "show", "republish"});
    if (action.empty()) return usage("give an action: list, show or republish");
    if (!vars.count("stream")) return usage("--stream is required");
    const std::string stream = vars["stream"].as<std::string>();
    ApiCall call{kName, vars["server"].as<std::string>(), "GET", "", "", "",
                 ClientOptionsFrom(vars)};
    if (action == "list") {
      std::vector<std::pair<std::string, std::string>> query;
      if (vars.count("after")) query.emplace_back("after", vars["after"].as<std::string>());
      if (vars.count("limit")) query.emplace_back("limit", absl::StrCat(vars["limit"].as<size_t>()));
      call.target = client::BuildTarget({"v1", "streams", stream, "dead-letters"}, query);
      call.lines_of = "deadLetters";
      return RunApiCall(call, io);
    }
    if (!vars.count("sequence")) return usage("--sequence is required");
    std::string segment = absl::StrCat(vars["sequence"].as<uint64_t>());
    if (action == "republish") {
      call.method = "POST";
      absl::StrAppend(&segment, ":republish");
    }
    call.target = client::BuildTarget({"v1", "streams", stream, "dead-letters", segment});
    return RunApiCall(call, io);
  }
};

}  // namespace

std::unique_ptr<Command> NewDeadLettersCommand() {
  return std::make_unique<DeadLettersCommand>();
}

}  // namespace keel::cli
