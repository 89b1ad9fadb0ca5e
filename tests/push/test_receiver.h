// TestReceiver: a small HTTP/1.1 server on 127.0.0.1 standing in for a push
// endpoint — it records every request and answers each as its handler
// says (a status, headers, and optionally a delay first, to make the
// sender time out). Keep-alive connections are served, each on a thread
// of its own, so a delayed answer never holds another connection up. With
// a certificate and key it serves HTTPS instead (OpenSSL).
#ifndef KEEL_TESTS_PUSH_TEST_RECEIVER_H_
#define KEEL_TESTS_PUSH_TEST_RECEIVER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "keel/core/mutex.h"

struct ssl_ctx_st;

namespace keel::push_test {

struct ReceivedRequest {
  std::string target;
  std::map<std::string, std::string> headers;  // Lower-case names.
  std::string body;
  absl::Time arrived;
  int answered = 0;  // The status the handler chose.

  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? "" : it->second;
  }
};

struct Reply {
  using HeaderList = std::vector<std::pair<std::string, std::string>>;
  // Reply{503}, Reply{429, {{"Retry-After", "1"}}}, Reply{200, {}, delay}.
  Reply(int status = 200, HeaderList headers = {}, absl::Duration delay = absl::ZeroDuration())
      : status(status), headers(std::move(headers)), delay(delay) {}

  int status;
  HeaderList headers;
  absl::Duration delay;  // Before answering.
};

// A certificate chain and its key (PEM files) to serve HTTPS with.
struct ReceiverTls {
  std::string cert_file;
  std::string key_file;
};

class TestReceiver {
 public:
  // `handler` gets each request and its index (0 for the first).
  using Handler = std::function<Reply(const ReceivedRequest& request, int index)>;
  explicit TestReceiver(Handler handler);
  TestReceiver(Handler handler, const ReceiverTls& tls);  // Aborts on a bad certificate.
  ~TestReceiver();

  uint16_t port() const { return port_; }
  std::string url() const {
    return std::string(tls_ == nullptr ? "http" : "https") +
           "://127.0.0.1:" + std::to_string(port_) + "/hook";
  }

  std::vector<ReceivedRequest> requests() const;
  // Waits until `done(requests())` holds or `timeout` passed; whether it held.
  bool WaitFor(const std::function<bool(const std::vector<ReceivedRequest>&)>& done,
               absl::Duration timeout) const;

 private:
  TestReceiver(Handler handler, ssl_ctx_st* tls);  // Takes `tls`.
  void Accept();
  void Serve(int fd);

  Handler handler_;
  ssl_ctx_st* tls_ = nullptr;  // OpenSSL's SSL_CTX; null for plain HTTP.
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stopping_{false};
  std::thread acceptor_;
  mutable Mutex mu_;
  std::vector<ReceivedRequest> requests_ ABSL_GUARDED_BY(mu_);
  std::vector<int> open_fds_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> connections_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel::push_test

#endif  // KEEL_TESTS_PUSH_TEST_RECEIVER_H_
