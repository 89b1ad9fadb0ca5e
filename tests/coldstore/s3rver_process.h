// S3rverProcess: a real S3-compatible server (the npm package s3rver, which
// the test setup installs into the build tree) started on a free loopback
// port with its data in a directory of its own, and stopped (SIGTERM, then
// SIGKILL) when destroyed. It creates one bucket at start.
//
// s3rver checks that a request's access key id is its own ("S3RVER") but
// not the SigV4 signature itself: the signer is checked against AWS's test
// vectors instead (sigv4_test.cc).
//
// Thread safety: not thread-safe; one test binary drives it.
#ifndef KEEL_TESTS_COLDSTORE_S3RVER_PROCESS_H_
#define KEEL_TESTS_COLDSTORE_S3RVER_PROCESS_H_

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "keel/core/config.h"

namespace keel::testing {

class S3rverProcess {
 public:
  static constexpr char kBucket[] = "keel-test";
  static constexpr char kAccessKeyId[] = "S3RVER";
  static constexpr char kSecretAccessKey[] = "S3RVER";

  // Starts s3rver from `install_dir` (holding node_modules/.bin/s3rver)
  // with its data under `data_dir`, and waits until it answers.
  static absl::StatusOr<std::unique_ptr<S3rverProcess>> Start(const std::string& install_dir,
                                                              const std::string& data_dir);
  ~S3rverProcess();
  S3rverProcess(const S3rverProcess&) = delete;
  S3rverProcess& operator=(const S3rverProcess&) = delete;

  std::string endpoint() const;
  // The "s3" store's options for the bucket, under `prefix`.
  Config StoreConfig(const std::string& prefix) const;

 private:
  S3rverProcess() = default;

  int port_ = 0;
  pid_t pid_ = -1;
  std::string log_file_;
};

}  // namespace keel::testing

#endif  // KEEL_TESTS_COLDSTORE_S3RVER_PROCESS_H_
