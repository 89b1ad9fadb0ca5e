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
#include "absl/strings/string_view.h"
#include <vector>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>

#include "absl/status/statusor.h"
#include "core/config.h"

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

std::unique_ptr<Command> NewDaemonCommand();
std::unique_ptr<Command> NewDeadLettersCommand();  // over HTTP
std::unique_ptr<Command> NewDeclareCommand();  // over HTTP
std::unique_ptr<Command> NewDriversCommand();
std::unique_ptr<Command> NewGroupCommand();  // over HTTP
std::unique_ptr<Command> NewPublishCommand();  // cmd/keel/client/ over HTTP
std::unique_ptr<Command> NewReplayCommand();
std::unique_ptr<Command> NewVersionCommand();
std::unique_ptr<Command> NewSelftestCommand();
std::unique_ptr<Command> NewStreamsCommand();
std::unique_ptr<Command> NewTailCommand();

// The `--driver NAME` and repeated `--driver-option key=value` options every
// command that opens a bus shares, and their conversion to a Config.
void AddDriverOptions(po::options_description& options, absl::string_view default_driver);
absl::StatusOr<Config> DriverConfigFrom(const po::variables_map& vars);

// "<command>: <message>" on stderr; returns kExitUsage.
int UsageError(CommandIo& io, absl::string_view command, absl::string_view message);

// The `action` positional of a `keel <noun> <action>` command when it is one
// of `actions`; "" when it is missing or another word.
std::string ActionIn(const po::variables_map& vars,
                     std::initializer_list<absl::string_view> actions);

// `--server HOST:PORT` (default 127.0.0.1:8080): the daemon a client
// subcommand talks to, and `--auth-token`: the bearer token it sends (a daemon
// with --auth-tokens).
void AddServerOption(po::options_description& options);
// The client options those give: the token (ClientOptions::token).
client::ClientOptions ClientOptionsFrom(const po::variables_map& vars);

// Exit codes.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

}  // namespace keel::cli

#endif  // KEEL_CMD_KEEL_COMMAND_H_
