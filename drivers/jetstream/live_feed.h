// LiveFeed: delivers the bus's stored records to the daemon's subscribers
// (FanOut) from the server's ordered feed, so that every daemon serving a
// bus delivers the same events in the same order, whoever published them.
//
// The feed is JetStream's republication of every stored record of the
// bus's streams (the JetStream stream's RePublish), read on one thread. It
// is published after a record is stored, so subscribers never see an event
// before it is stored, but it is at-most-once: records get lost when a
// stream leader changes or this daemon reconnects. The feed therefore
// checks that each stream's records continue each other (by Keel sequence)
// and reads the ones it missed from the stream; a writer waiting for its
// own record asks for it to be read; and while the feed is idle it compares
// the JetStream stream's last sequence with what it has seen once a second,
// so that a lost last record is read too.
//
// It also keeps, for every stream of the bus, the bounds its newest record
// reports (from the feed and from this daemon's writers), which answer
// NeedsTrim without a request.
//
// Thread safety: all public methods are safe to call concurrently.
#ifndef KEEL_DRIVERS_JETSTREAM_LIVE_FEED_H_
#define KEEL_DRIVERS_JETSTREAM_LIVE_FEED_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "keel/core/fanout.h"
#include "keel/core/logger.h"
#include "keel/core/mutex.h"
#include "keel/core/stream_log.h"
#include "keel/drivers/jetstream/bus_layout.h"
#include "keel/drivers/jetstream/health.h"
#include "keel/drivers/jetstream/jetstream_api.h"
#include "keel/drivers/jetstream/nats_client.h"
#include "keel/drivers/jetstream/record_reader.h"

namespace keel::jetstream {

class LiveFeed {
 public:
  // `health` hears the outcome of the feed's own requests.
  LiveFeed(NatsClient& client, JetStreamApi& api, RecordReader& reader, const BusLayout& layout,
           FanOut& fanout, Logger& logger, Health& health);
  ~LiveFeed();

  // Subscribes, reads every stream's newest record, and starts the thread.
  absl::Status Start();
  // Stops the thread; nothing is delivered afterwards. Idempotent.
  void Stop();

  // A writer of this daemon stored `record` of `stream`.
  void NoteStored(absl::string_view stream, uint64_t js_seq, const RecordHeader& header);
  // Waits (a few seconds at most) until the feed delivered the record at
  // `js_seq` of `stream` to the subscribers, asking for it to be read if it
  // is late.
  void AwaitDelivered(absl::string_view stream, uint64_t js_seq);
  // The bounds of every stream of the bus, as their newest records report.
  std::vector<std::pair<std::string, LogBounds>> Streams() const;

 private:
  // A publisher in AwaitDelivered. Each has its own condition variable, so
  // a delivered record wakes only the publishers it answers, not every
  // publisher of the daemon.
  struct Waiter {
    uint64_t js_seq = 0;
    CondVar delivered;
  };
  struct Entry {
    std::vector<Waiter*> waiters;
    uint64_t delivered_js = 0;  // The newest record handled.
    uint64_t next = 0;          // The sequence after its events; 0 while unknown.
    uint64_t bounds_js = 0;     // The record `bounds` come from.
    LogBounds bounds;
  };

  void Run();
  // Delivers `record` of `stream` unless it was handled; reads the stream's
  // records in between first when `record` does not continue the last one.
  void Handle(const std::string& stream, const StoredRecord& record, bool may_read_missed);
  // Handles `stream`'s records after the last one handled, below `below`.
  void ReadMissed(const std::string& stream, uint64_t below);
  // Reads records the feed lost after the newest it saw.
  void CheckTail();
  // Marks `entry` handled up to `js_seq` and wakes the publishers waiting
  // for it.
  static void DeliveredLocked(Entry& entry, uint64_t js_seq);

  NatsClient& client_;
  JetStreamApi& api_;
  RecordReader& reader_;
  const BusLayout& layout_;
  FanOut& fanout_;
  Logger& logger_;
  Health& health_;

  std::unique_ptr<NatsSubscription> subscription_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  uint64_t seen_js_ = 0;  // Feed thread only: the newest JetStream sequence seen.

  mutable Mutex mu_;
  absl::flat_hash_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_set<std::string> wanted_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel::jetstream

#endif  // KEEL_DRIVERS_JETSTREAM_LIVE_FEED_H_
