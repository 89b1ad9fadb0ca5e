// Command: one `keel` subcommand (daemon, publish, drivers, ...).
//
// Each command declares its options (Boost.Program_options) and runs with the
// parsed values. Options come from flags first, then from the file named by
// `--config` (INI style, `key = value`), so flags override the file.
//
// Thread safety: commands are created and run on one thread.
#ifndef KEEL_CMD_KEEL_COMMAND_H_
#define KEEL_CMD_KEEL_COMMAND_H_

#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/core/config.h"
#include "keel/core/driver_factory.h"

namespace keel::client {
struct ClientOptions;
}  // namespace keel::client

namespace keel::cli {

namespace po = boost::program_options;

struct CommandIo {
  std::ostream& out;
  std::ostream& err;
};

class Command {
 public:
  virtual ~Command() = default;
  virtual absl::string_view name() const = 0;
  virtual absl::string_view summary() const = 0;
  virtual void AddOptions(po::options_description& options) const {}
  // Positional argument names, in order (each may appear once).
  virtual std::vector<std::string> Positionals() const { return {}; }
  virtual int Run(const po::variables_map& vars, CommandIo& io) const = 0;
};

std::vector<std::unique_ptr<Command>> BuiltinCommands();

std::unique_ptr<Command> NewCollectionCommand();  // over HTTP
std::unique_ptr<Command> NewDaemonCommand();
std::unique_ptr<Command> NewDeadLettersCommand();  // over HTTP
std::unique_ptr<Command> NewDeclareCommand();  // over HTTP
std::unique_ptr<Command> NewDriversCommand();
std::unique_ptr<Command> NewGroupCommand();  // over HTTP
std::unique_ptr<Command> NewPublishCommand();  // cmd/keel/client/ over HTTP
std::unique_ptr<Command> NewReplayCommand();
std::unique_ptr<Command> NewVersionCommand();
std::unique_ptr<Command> NewSelftestCommand();
std::unique_ptr<Command> NewExportCommand();
std::unique_ptr<Command> NewStreamsCommand();
std::unique_ptr<Command> NewSubscriptionCommand();  // over HTTP
std::unique_ptr<Command> NewTailCommand();
std::unique_ptr<Command> NewTokenCommand();

// The options every command that opens a bus shares, as a group of their
// own: `--driver NAME`, repeated `--driver-option key=value`, and the flags
// the registered drivers declare for some of their options
// (OptionSpec::flag, such as `--data-dir`). Call it after adding the
// command's own options: a driver's flag that would shadow one of them is
// left out (its option is still set with --driver-option).
// With `flag_defaults`, a declared flag that is not given still sets its
// option, to OptionSpec::flag_default, where the selected driver takes it (a
// server's defaults: the daemon stores in ./data); without, it sets nothing.
void AddDriverOptions(po::options_description& options, absl::string_view default_driver,
                      bool flag_defaults);

// The driver those options select, the Config they give it and how its bus
// will behave.
struct DriverSelection {
  std::string name;
  std::shared_ptr<const DriverFactory> factory;
  Config config;
  DriverTraits traits;
};

// Reads the options AddDriverOptions added: --driver-option values, then
// each driver flag given (a --driver-option of the same key wins), then the
// flag defaults the selected driver takes. kNotFound for an unknown driver
// (or a store, etc., that the driver's options name); kInvalidArgument, a
// usage error, for an option the driver does not declare or a value not of
// its type, naming the valid options (ValidateDriverOptions), and for a
// driver flag given to a driver that does not take it.
absl::StatusOr<DriverSelection> SelectDriver(const po::variables_map& vars);

// Where a Run() reports a failed SelectDriver: kExitUsage for a usage error,
// else kExitFailure, after "<command>: <message>" on stderr.
int DriverSelectionError(CommandIo& io, absl::string_view command, const absl::Status& status);

// "<command>: <message>" on stderr; returns kExitUsage.
int UsageError(CommandIo& io, absl::string_view command, absl::string_view message);

// The `action` positional of a `keel <noun> <action>` command when it is one
// of `actions`; "" when it is missing or another word.
std::string ActionIn(const po::variables_map& vars,
                     std::initializer_list<absl::string_view> actions);

// The text of `--data TEXT` or the file of `--data-file PATH`, or stdin's
// when neither is given (`keel publish`, `keel collection put`);
// kInvalidArgument for both, or a file that cannot be read.
absl::StatusOr<std::string> DataTextFrom(const po::variables_map& vars);

// `--server HOST:PORT` (default 127.0.0.1:8080; `https://HOST:PORT` for
// TLS): the daemon a client subcommand talks to; `--auth-token`: the bearer
// token it sends (a daemon with --auth-tokens); `--ca-file`,
// `--client-cert`, `--client-key`: TLS's files.
void AddServerOption(po::options_description& options);
// The client options those give: the token and TLS (on for an https://
// server).
client::ClientOptions ClientOptionsFrom(const po::variables_map& vars);

// Exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

}  // namespace keel::cli

#endif  // KEEL_CMD_KEEL_COMMAND_H_
