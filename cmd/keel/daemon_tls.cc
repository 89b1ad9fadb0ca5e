#include "keel/cmd/keel/daemon_tls.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace keel::cli {

namespace po = boost::program_options;

void AddTlsOptions(po::options_description& options) {
  options.add_options()(
      "tls-cert", po::value<std::string>()->default_value(""),
      "serve HTTPS (TLS 1.2+) with this PEM certificate chain; re-read on SIGHUP")(
      "tls-key", po::value<std::string>()->default_value(""),
      "the PEM private key of --tls-cert; re-read on SIGHUP")(
      "tls-client-ca", po::value<std::string>()->default_value(""),
      "require client certificates signed by these PEM CA certificates");
}

absl::StatusOr<std::shared_ptr<server::ServerTls>> ServerTlsFrom(const po::variables_map& vars) {
  server::TlsFiles files{vars["tls-cert"].as<std::string>(), vars["tls-key"].as<std::string>(),
                         vars["tls-client-ca"].as<std::string>()};
  if (files.cert.empty() && files.key.empty() && files.client_ca.empty()) return nullptr;
  return server::ServerTls::Load(std::move(files));
}

void ReloadTls(server::ServerTls* tls, Logger& logger) {
  if (tls == nullptr) return;
  if (absl::Status reloaded = tls->Reload(); !reloaded.ok()) {
    logger.Error(
        absl::StrCat("keel daemon: SIGHUP: TLS certificate not re-read, keeping the "
                     "previous one: ",
                     reloaded.message()));
    return;
  }
  logger.Info("keel daemon: SIGHUP: TLS certificate re-read");
}

}  // namespace keel::cli
