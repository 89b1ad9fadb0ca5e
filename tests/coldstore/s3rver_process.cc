#include "keel/tests/coldstore/s3rver_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "keel/coldstore/cold_store.h"
#include "keel/core/status_macros.h"
#include "keel/tests/ports/free_port.h"

namespace keel::testing {
namespace {

std::string Tail(const std::string& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  std::string all = text.str();
  return all.size() > 2000 ? all.substr(all.size() - 2000) : all;
}

}  // namespace

absl::StatusOr<std::unique_ptr<S3rverProcess>> S3rverProcess::Start(const std::string& install_dir,
                                                                    const std::string& data_dir) {
  const std::string program = absl::StrCat(install_dir, "/node_modules/.bin/s3rver");
  if (access(program.c_str(), X_OK) != 0) {
    return absl::NotFoundError(absl::StrCat(program, " is missing: the test setup ",
                                            "(ctest's coldstore_s3rver_install) installs it"));
  }
  std::filesystem::create_directories(data_dir);
  std::unique_ptr<S3rverProcess> server(new S3rverProcess());
  KEEL_ASSIGN_OR_RETURN(server->port_, FreePort());
  server->log_file_ = absl::StrCat(data_dir, ".log");
  const std::string port = absl::StrCat(server->port_);
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork() failed");
  if (pid == 0) {
    const int log = open(server->log_file_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (log >= 0) {
      dup2(log, STDOUT_FILENO);
      dup2(log, STDERR_FILENO);
    }
    // s3rver makes its listing continuation tokens with DES, which
    // OpenSSL 3 keeps in its legacy provider: without it, every listing of
    // more than one page fails with a 500.
    setenv("NODE_OPTIONS", "--openssl-legacy-provider", 1);
    execl(program.c_str(), program.c_str(), "--directory", data_dir.c_str(), "--address",
          "127.0.0.1", "--port", port.c_str(), "--silent", "--configure-bucket", kBucket,
          static_cast<char*>(nullptr));
    _exit(127);
  }
  server->pid_ = pid;

  // Ready once the bucket answers a listing (node takes a moment to start).
  Config config = server->StoreConfig("ready");
  config.Set("retries", "0");
  config.Set("connect_timeout", "1s");
  absl::Status last = absl::UnknownError("not tried");
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (absl::Now() < deadline) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      server->pid_ = -1;
      return absl::UnavailableError(
          absl::StrCat("s3rver exited at start; its log:\n", Tail(server->log_file_)));
    }
    absl::StatusOr<std::unique_ptr<ColdStore>> store = OpenColdStore("s3", config);
    if (!store.ok()) return store.status();
    last = (*store)->List("").status();
    if (last.ok()) return server;
    absl::SleepFor(absl::Milliseconds(100));
  }
  return absl::UnavailableError(absl::StrCat("s3rver did not answer in 60 s (", last.message(),
                                             "); its log:\n", Tail(server->log_file_)));
}

S3rverProcess::~S3rverProcess() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  for (int i = 0; i < 50; ++i) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
    absl::SleepFor(absl::Milliseconds(100));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
}

std::string S3rverProcess::endpoint() const { return absl::StrCat("http://127.0.0.1:", port_); }

Config S3rverProcess::StoreConfig(const std::string& prefix) const {
  return Config{{"endpoint", endpoint()},
                {"bucket", kBucket},
                {"prefix", prefix},
                {"region", "us-east-1"},
                {"access_key_id", kAccessKeyId},
                {"secret_access_key", kSecretAccessKey}};
}

}  // namespace keel::testing
