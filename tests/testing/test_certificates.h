// Certificates for TLS tests, made with the openssl command into a
// directory: a CA, a server certificate for IP address 127.0.0.1 only that
// the CA signed, and a client certificate it signed.
#ifndef KEEL_TESTS_TESTING_TEST_CERTIFICATES_H_
#define KEEL_TESTS_TESTING_TEST_CERTIFICATES_H_

#include <string>

#include "absl/status/statusor.h"

namespace keel::testing {

struct TestCertificates {
  std::string ca;           // PEM CA certificate.
  std::string server_cert;  // PEM, for IP 127.0.0.1 (not the name localhost).
  std::string server_key;
  std::string client_cert;  // PEM, CN keel-test-client.
  std::string client_key;
};

// Makes them in `dir` under names starting with `prefix` (so a directory
// may hold several CAs); kInternal with the command when openssl failed.
absl::StatusOr<TestCertificates> MakeTestCertificates(const std::string& dir,
                                                      const std::string& prefix = "");

}  // namespace keel::testing

#endif  // KEEL_TESTS_TESTING_TEST_CERTIFICATES_H_
