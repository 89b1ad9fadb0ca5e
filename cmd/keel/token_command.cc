// `keel token hash`: prints the tokens-file line of a token (rfcs/0004
// §13), so that the daemon's `--auth-tokens` file holds its SHA-256, never
// the token itself.
//
//   $ openssl rand -hex 32 > ingest.token
//   $ keel token hash --token-file ingest.token --scope publish:orders. --tenant acme
//   sha256:5f1c… publish:orders. tenant=acme
//
// The token is read from --token-file (default `-`, standard input): its
// first line, so it stays out of the process list and the shell history.
#include <boost/program_options/value_semantic.hpp>
#include <fstream>
#include <iostream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/command.h"
#include "keel/cmd/keel/server/access_tokens.h"
#include "keel/cmd/keel/server/grant.h"

namespace keel::cli {
namespace {

constexpr char kName[] = "keel token";

class TokenCommand : public Command {
 public:
  absl::string_view name() const override { return "token"; }
  absl::string_view summary() const override {
    return "print the --auth-tokens line (SHA-256 and scopes) of a bearer token";
  }
  void AddOptions(po::options_description& options) const override {
    options.add_options()("action", po::value<std::string>(), "hash (positional)")(
        "token-file", po::value<std::string>()->default_value("-"),
        "read the token from the first line of this file ('-': standard input)")(
        "scope", po::value<std::vector<std::string>>()->composing(),
        "a scope: publish, read or admin, optionally ':<stream prefix>' (read:orders.); "
        "repeatable, at least one")(
        "tenant", po::value<std::string>(),
        "bind the token to a tenant: it publishes and reads only that tenant's events");
  }
  std::vector<std::string> Positionals() const override { return {"action"}; }

  int Run(const po::variables_map& vars, CommandIo& io) const override {
    if (ActionIn(vars, {"hash"}).empty()) return UsageError(io, kName, "give an action: hash");
    std::vector<std::string> words;
    if (vars.count("scope")) words = vars["scope"].as<std::vector<std::string>>();
    if (vars.count("tenant")) words.push_back("tenant=" + vars["tenant"].as<std::string>());
    absl::StatusOr<server::Grant> grant = server::Grant::Parse(absl::MakeConstSpan(words));
    if (!grant.ok()) return UsageError(io, kName, grant.status().message());
    const std::string path = vars["token-file"].as<std::string>();
    std::string token;
    if (path == "-") {
      std::getline(std::cin, token);
    } else {
      std::ifstream file(path);
      if (!file) return UsageError(io, kName, absl::StrCat("cannot read '", path, "'"));
      std::getline(file, token);
    }
    token = std::string(absl::StripAsciiWhitespace(token));
    if (token.size() < server::AccessTokens::kMinTokenLength) {
      return UsageError(io, kName,
                        absl::StrCat("the token is ", token.size(), " characters; give at least ",
                                     server::AccessTokens::kMinTokenLength,
                                     " (`openssl rand -hex 32` makes one)"));
    }
    io.out << server::TokenHashLine(token, *grant) << "\n";
    return kExitOk;
  }
};

}  // namespace

std::unique_ptr<Command> NewTokenCommand() { return std::make_unique<TokenCommand>(); }

}  // namespace keel::cli
