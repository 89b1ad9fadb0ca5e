// `keel daemon`'s TLS flags: `--tls-cert`, `--tls-key` (both, or neither
// for plain HTTP), `--tls-client-ca` (ask every client for a certificate
// that CA signed), and their reload on SIGHUP.
#ifndef KEEL_CMD_KEEL_DAEMON_TLS_H_
#define KEEL_CMD_KEEL_DAEMON_TLS_H_

#include <boost/program_options.hpp>
#include <memory>

#include "absl/status/statusor.h"
#include "keel/cmd/keel/server/server_tls.h"
#include "keel/core/logger.h"

namespace keel::cli {

void AddTlsOptions(boost::program_options::options_description& options);

// Null when no TLS flag is given; kInvalidArgument for one of the pair
// without the other, or files that do not load.
absl::StatusOr<std::shared_ptr<server::ServerTls>> ServerTlsFrom(
    const boost::program_options::variables_map& vars);

// SIGHUP: re-reads the certificate and key (new connections get them),
// keeping the ones in use on an error, which it logs.
void ReloadTls(server::ServerTls* tls, Logger& logger);

}  // namespace keel::cli

#endif  // KEEL_CMD_KEEL_DAEMON_TLS_H_
