// ConnectionChurn: one thread that keeps opening and closing connections
// to the daemon — short-lived HTTP clients (a health probe and a stream
// list each) and SSE streams read briefly and dropped — as clients that
// come and go do. Any failure is recorded.
#ifndef KEEL_TESTS_SOAK_CONNECTION_CHURN_H_
#define KEEL_TESTS_SOAK_CONNECTION_CHURN_H_

#include <atomic>
#include <string>
#include <vector>

#include "keel/tests/crash/endpoint.h"
#include "keel/tests/crash/failures.h"

namespace keel::soak_test {

class ConnectionChurn {
 public:
  ConnectionChurn(std::vector<std::string> streams, const crash_test::Endpoint& endpoint,
                  crash_test::Failures& failures);

  // Churns until `stop`. Call once.
  void Run(const std::atomic<bool>& stop);

  int connections() const { return connections_; }
  int sse_streams() const { return sse_streams_; }

 private:
  void Request();
  void BriefStream(const std::string& stream);

  const std::vector<std::string> streams_;
  const crash_test::Endpoint& endpoint_;
  crash_test::Failures& failures_;
  int connections_ = 0;
  int sse_streams_ = 0;
};

}  // namespace keel::soak_test

#endif  // KEEL_TESTS_SOAK_CONNECTION_CHURN_H_
