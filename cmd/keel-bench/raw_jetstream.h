// RawJetStream: the baseline of `keel-bench jetstream`, a plain nats.c
// (libnats) JetStream publisher as an application would write one without
// Keel: one connection, every message published with js_PublishAsync and
// the acknowledgments awaited with js_PublishAsyncComplete. It also creates
// and deletes the benchmark's JetStream streams.
//
// Thread safety: one thread uses a RawJetStream.
#ifndef KEEL_CMD_KEEL_BENCH_RAW_JETSTREAM_H_
#define KEEL_CMD_KEEL_BENCH_RAW_JETSTREAM_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

struct __natsConnection;
struct __jsCtx;

namespace keel::bench {

class RawJetStream {
 public:
  // `servers`: comma-separated NATS URLs. At most `max_pending` publishes
  // are unacknowledged at a time (nats.c makes js_PublishAsync wait beyond).
  static absl::StatusOr<std::unique_ptr<RawJetStream>> Connect(const std::string& servers,
                                                               int64_t max_pending);
  ~RawJetStream();
  RawJetStream(const RawJetStream&) = delete;
  RawJetStream& operator=(const RawJetStream&) = delete;

  // A file-stored stream `name` holding `subjects` (a wildcard subject),
  // with `replicas` replicas, as the jetstream driver creates its own.
  absl::Status CreateStream(const std::string& name, const std::string& subjects, int replicas);
  // Deletes stream `name`; a stream that does not exist is not an error.
  absl::Status DeleteStream(const std::string& name);
  // Messages stream `name` holds.
  absl::StatusOr<uint64_t> StreamMessages(const std::string& name);

  // Publishes message i with data `data[i]` to `subjects[i]`, all
  // asynchronously, and waits until every one is acknowledged. Returns the
  // seconds from the first publish to the last acknowledgment; an error if
  // any publish failed.
  absl::StatusOr<double> PublishAll(const std::vector<std::string>& subjects,
                                    const std::vector<std::string>& data);

 private:
  RawJetStream() = default;

  __natsConnection* connection_ = nullptr;
  __jsCtx* js_ = nullptr;
  std::atomic<uint64_t> failed_{0};  // Publishes JetStream refused or never answered.
};

}  // namespace keel::bench

#endif  // KEEL_CMD_KEEL_BENCH_RAW_JETSTREAM_H_
