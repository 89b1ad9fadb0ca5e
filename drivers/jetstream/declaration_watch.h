// DeclarationWatch: applies the stream declarations other daemons of the bus
// store, soon after they store them, so that every daemon enforces a
// stream's retention and idempotency window without a restart.
//
// It listens to the bus's metadata subjects on plain NATS. A message there
// is only a hint that a record may have changed (plain NATS also carries
// publishes JetStream refused), so the watch re-reads the declaration from
// JetStream, which is the truth. Hints are at most once: after the client
// dropped messages or the connection was down, it re-reads every
// declaration.
//
// Thread safety: Start and Stop from one thread; the callbacks run on the
// watch's own thread.
#ifndef KEEL_DRIVERS_JETSTREAM_DECLARATION_WATCH_H_
#define KEEL_DRIVERS_JETSTREAM_DECLARATION_WATCH_H_

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "keel/core/logger.h"
#include "keel/drivers/jetstream/bus_layout.h"
#include "keel/drivers/jetstream/nats_client.h"

namespace keel::jetstream {

class DeclarationWatch {
 public:
  // `refresh(stream)` adopts one stream's stored declaration,
  // `refresh_all()` every one.
  DeclarationWatch(NatsClient& client, const BusLayout& layout, Logger& logger,
                   std::function<absl::Status(absl::string_view)> refresh,
                   std::function<absl::Status()> refresh_all);
  ~DeclarationWatch();

  // Subscribes and starts the thread.
  absl::Status Start();
  // Stops the thread. Idempotent.
  void Stop();

 private:
  void Run();
  void Hint(absl::string_view subject);
  // Whether hints may have been lost since the last call.
  bool MayHaveMissed();

  NatsClient& client_;
  const BusLayout& layout_;
  Logger& logger_;
  const std::function<absl::Status(absl::string_view)> refresh_;
  const std::function<absl::Status()> refresh_all_;

  std::unique_ptr<NatsSubscription> subscription_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  // Watch thread only.
  uint64_t dropped_ = 0;
  bool was_disconnected_ = false;
  bool refresh_all_pending_ = false;
};

}  // namespace keel::jetstream

#endif  // KEEL_DRIVERS_JETSTREAM_DECLARATION_WATCH_H_
