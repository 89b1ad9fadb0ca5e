// RequestMux: requests on one NATS connection, many in flight at once,
// answered through one wildcard inbox subscription of its own.
//
// Every request gets the reply subject `<inbox>.<n>` and waits on a
// semaphore of its own (wake_signal.h); the subscription's callback hands
// each reply to its request and posts it: one wake-up, and no lock to fight
// for after it. The C client's own request call waits on the connection's
// lock instead, which every publish, flush and delivery of the connection
// also takes: dozens of threads with one request each then take turns on
// that lock (and spin on it) rather than keeping their requests in flight
// together. Publishing with a reply subject and waiting here keeps the
// connection's lock for the publish alone.
//
// A request whose reply does not come within its timeout is kTimedOut (its
// reply, should it come later, is dropped); Close() answers every waiting
// request kClosed.
//
// Thread safety: all methods are safe to call concurrently.
#ifndef KEEL_DRIVERS_JETSTREAM_REQUEST_MUX_H_
#define KEEL_DRIVERS_JETSTREAM_REQUEST_MUX_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/core/mutex.h"
#include "keel/drivers/jetstream/nats_client.h"
#include "keel/drivers/jetstream/wake_signal.h"

struct __natsConnection;
struct __natsSubscription;
struct __natsMsg;

namespace keel::jetstream {

class RequestMux {
 public:
  // Subscribes to a fresh inbox of `connection` (which outlives the mux).
  static absl::StatusOr<std::unique_ptr<RequestMux>> Start(__natsConnection* connection);
  // Unsubscribes and waits until the subscription's callback is done.
  ~RequestMux();
  RequestMux(const RequestMux&) = delete;
  RequestMux& operator=(const RequestMux&) = delete;

  NatsReply Request(absl::string_view subject, const NatsHeaders& headers, absl::string_view data,
                    absl::Duration timeout);
  // Answers every waiting and later request kClosed. Idempotent.
  void Close();

 private:
  // Owned by the waiting request while in `pending_`, then by whoever took
  // it out of `pending_` until that one posts `answered`.
  struct Pending {
    WakeSignal answered;
    NatsReply reply;
  };

  explicit RequestMux(__natsConnection* connection) : connection_(connection) {}
  static void OnReply(__natsConnection* connection, __natsSubscription* sub, __natsMsg* msg,
                      void* closure);
  static void OnComplete(void* closure);
  void Answer(uint64_t id, __natsMsg* msg);

  __natsConnection* const connection_;
  __natsSubscription* sub_ = nullptr;
  std::string prefix_;  // "<inbox>."
  std::atomic<uint64_t> next_id_{0};
  Notification completed_;  // The subscription will call OnReply no more.

  Mutex mu_;
  absl::flat_hash_map<uint64_t, Pending*> pending_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace keel::jetstream

#endif  // KEEL_DRIVERS_JETSTREAM_REQUEST_MUX_H_
