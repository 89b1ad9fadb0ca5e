// The request-and-print step the HTTP subcommands share (`keel group`,
// `keel dead-letters`, `keel collection`): send one request to the daemon, turn an error answer
// into a message on stderr, and print the answer as JSON lines on stdout —
// the body itself, or each element of one of its array members.
//
// Thread safety: one call per thread (one HttpClient each).
#ifndef KEEL_CMD_KEEL_API_CALL_H_
#define KEEL_CMD_KEEL_API_CALL_H_

#include <string>

#include "absl/strings/string_view.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/cmd/keel/command.h"

namespace keel::cli {

struct ApiCall {
  std::string command;  // For messages: "keel group".
  std::string server;   // --server, HOST:PORT.
  std::string method;   // "GET", "POST", "PUT" or "DELETE".
  std::string target;   // client::BuildTarget(...).
  std::string body;     // JSON for POST and PUT.
  // Print each element of this array member on its own line instead of the
  // whole body (e.g. "groups").
  std::string lines_of;
  client::ClientOptions client;  // ClientOptionsFrom(vars): the --auth-token.
  client::Headers headers;       // Sent besides those the client sets (If-Match).
};

// Returns the exit code: kExitOk, kExitUsage (bad --server) or kExitFailure.
int RunApiCall(const ApiCall& call, CommandIo& io);

}  // namespace keel::cli

#endif  // KEEL_CMD_KEEL_API_CALL_H_
