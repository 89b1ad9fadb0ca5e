// `keel selftest`: opens a driver by name and checks the basic contract end to
// end (publish, replay, follow from earliest). Useful to check a host
// program's own driver or a config before starting a daemon.
#include <ostream>

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/command.h"
#include "keel/core/driver_factory.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/builtin_drivers.h"

namespace keel::cli {
namespace {

constexpr int kEvents = 3;

absl::Status Check(bool condition, absl::string_view what) {
  return condition ? absl::OkStatus() : absl::InternalError(what);
}

absl::Status RunSelftest(EventBus& bus, const std::string& stream, std::ostream& out) {
  Replayer* replayer = bus.replayer();
  KEEL_RETURN_IF_ERROR(Check(replayer != nullptr, "driver keeps no history"));
  KEEL_ASSIGN_OR_RETURN(StreamInfo before, replayer->Bounds(stream));
  for (int i = 0; i < kEvents; ++i) {
    Event event;
    event.stream = stream;
    event.type = "keel.selftest";
    event.payload = absl::StrCat("{\"n\":", i, "}");
    event.content_type = "application/json";
    KEEL_ASSIGN_OR_RETURN(Receipt receipt, bus.Publish(std::move(event)));
    KEEL_RETURN_IF_ERROR(Check(receipt.sequence == before.last_sequence + i + 1,
                               "sequences are not consecutive"));
  }
  ReplayRequest request;
  request.stream = stream;
  request.after = Position::After(before.head);
  KEEL_ASSIGN_OR_RETURN(ReplayPage page, replayer->Replay(request));
  KEEL_RETURN_IF_ERROR(Check(page.events.size() == kEvents, "replay did not return every event"));

  KEEL_ASSIGN_OR_RETURN(auto follower, bus.Follow(stream, Position::After(before.head)));
  size_t followed = 0;
  while (followed < kEvents) {
    KEEL_ASSIGN_OR_RETURN(auto events, follower->Next(kEvents, absl::Seconds(5)));
    KEEL_RETURN_IF_ERROR(Check(!events.empty(), "follow delivered nothing within 5s"));
    followed += events.size();
  }
  out << "selftest passed: published " << kEvents << ", replayed " << page.events.size()
      << ", followed " << followed << " on stream '" << stream << "'\n";
  return absl::OkStatus();
}

class SelftestCommand : public Command {
 public:
  absl::string_view name() const override { return "selftest"; }
  absl::string_view summary() const override {
    return "open a driver and check publish, replay and follow end to end";
  }
  void AddOptions(po::options_description& options) const override {
    options.add_options()("stream", po::value<std::string>()->default_value("keel.selftest"),
                          "stream to write the test events to");
    // No flag defaults: a selftest writes where it is told, or nowhere.
    AddDriverOptions(options, EphemeralDriverName(), /*flag_defaults=*/false);
  }
  int Run(const po::variables_map& vars, CommandIo& io) const override {
    absl::StatusOr<DriverSelection> selection = SelectDriver(vars);
    if (!selection.ok()) return DriverSelectionError(io, "keel selftest", selection.status());
    const std::string& driver = selection->name;
    absl::StatusOr<std::unique_ptr<EventBus>> bus = CreateBus(driver, selection->config);
    absl::Status status = bus.ok() ? RunSelftest(**bus, vars["stream"].as<std::string>(), io.out)
                                   : bus.status();
    if (bus.ok()) status.Update((*bus)->Close());
    if (!status.ok()) {
      io.err << "keel selftest: driver '" << driver << "': " << status << "\n";
      return kExitFailure;
    }
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> NewSelftestCommand() { return std::make_unique<SelftestCommand>(); }

}  // namespace keel::cli
