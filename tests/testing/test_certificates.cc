#include "keel/tests/testing/test_certificates.h"

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace keel::testing {
namespace {

// The openssl commands that make a key and a certificate `name` signed by
// the CA `ca`, with `extension` (an x509v3 line).
std::string SignedCertificate(const std::string& ca, const std::string& name,
                              const std::string& subject, const std::string& extension) {
  return absl::StrCat("openssl req -newkey rsa:2048 -nodes -subj /CN=", subject, " -keyout ", name,
                      ".key -out ", name, ".csr 2>/dev/null && printf '", extension, "' > ", name,
                      ".ext && openssl x509 -req -in ", name, ".csr -CA ", ca, ".pem -CAkey ", ca,
                      ".key -CAcreateserial -days 2 -extfile ", name, ".ext -out ", name,
                      ".pem 2>/dev/null");
}

}  // namespace

absl::StatusOr<TestCertificates> MakeTestCertificates(const std::string& dir,
                                                      const std::string& prefix) {
  const std::string ca = prefix + "ca";
  const std::string server = prefix + "server";
  const std::string client = prefix + "client";
  const std::string command = absl::StrCat(
      "cd '", dir, "' && openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=keel-test-",
      ca, " -keyout ", ca, ".key -out ", ca, ".pem 2>/dev/null && ",
      SignedCertificate(ca, server, "127.0.0.1", "subjectAltName=IP:127.0.0.1"), " && ",
      SignedCertificate(ca, client, "keel-test-client", "extendedKeyUsage=clientAuth"));
  if (std::system(command.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("openssl could not make certificates: ", command));
  }
  const std::string at = dir + "/";
  return TestCertificates{at + ca + ".pem", at + server + ".pem", at + server + ".key",
                          at + client + ".pem", at + client + ".key"};
}

}  // namespace keel::testing
