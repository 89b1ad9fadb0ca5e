// PublishCoalescer: gathers the publishes the I/O threads read in one pass
// and answers them with one Api::HandleAll, so that publishes to one stream
// share one store write (and, with sync=always, one fsync).
//
// A session hands a publish to Add() and gets its response through the
// callback. The first Add() after a flush posts the next flush to the I/O
// context: it runs after the handlers already queued there, i.e. after the
// other reads completed by the same poll, and takes everything gathered by
// then. A lone publish therefore waits for nothing but the handlers that
// were ready anyway. The flush commits:
// - on the I/O thread when the server's publishes never wait for a disk
//   (ServerOptions::inline_publishes) and the gathered bodies are not large
//   (kInlineCommitBytes when the bus commits on a thread of its own, else
//   kInlineBodyBytes);
// - else, when the bus commits without blocking (EventBus::PublishesAsync),
//   through Api::HandleAllAsync, parsed on the I/O thread (on the pool when
//   large): no thread waits for the disk, the next flushes keep gathering
//   while one is committed, and the answers come back to the I/O thread;
// - else on the blocking pool, one task per stream, where the next flushes
//   keep gathering while one waits for its fsync, and the bus's group
//   commit joins those that overlap.
//
// Thread safety: Add may be called from any thread.
#ifndef KEEL_CMD_KEEL_SERVER_PUBLISH_COALESCER_H_
#define KEEL_CMD_KEEL_SERVER_PUBLISH_COALESCER_H_

#include <atomic>
#include <cstddef>
#include <functional>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/thread_pool.hpp>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "keel/cmd/keel/server/api.h"
#include "keel/cmd/keel/server/http_types.h"
#include "keel/core/mutex.h"

namespace keel::server {

class PublishCoalescer {
 public:
  // Not a std::function: that allocated for every session's reply (a
  // shared_ptr is not trivially copyable, so it is never stored inline).
  using Reply = absl::AnyInvocable<void(HttpResponse)>;

  // Bodies a flush parses (and, with a bus that blocks its caller, commits)
  // on the I/O thread at most; more go to the pool, so that a burst of large
  // batches holds up an I/O thread's other sessions for tens of
  // milliseconds at most. (Below it, inline is faster than the pool even for
  // 100-event batches: 0.30-0.32M against 0.26-0.28M events/s at 64 KiB.)
  static constexpr size_t kInlineBodyBytes = 4 * 1024 * 1024;
  // With a bus that commits on a thread of its own, passes larger than this
  // are committed there even when publishes never wait for a disk: the
  // commit of one pass then overlaps the parsing of the next. Below it the
  // hand-offs to that thread and back cost more than they save
  // (100-event batches made 0.32-0.35M events/s through the committer
  // thread against 0.29-0.32M inline; single events were about 7% slower
  // when sent through it too).
  static constexpr size_t kInlineCommitBytes = 16 * 1024;
  // A pass's storage is kept for the next one up to this many publishes.
  static constexpr size_t kKeptPassCapacity = 1024;

  // `async_passes` counts the passes committed through
  // Api::HandleAllAsync that are not answered yet.
  PublishCoalescer(Api& api, boost::asio::io_context& io, boost::asio::thread_pool& blocking,
                   bool commit_inline, std::atomic<int>& async_passes)
      : api_(api),
        io_(io),
        blocking_(blocking),
        commit_inline_(commit_inline),
        async_passes_(async_passes) {}

  // Queues `request` (a publish, Api::IsPublish) for the next flush;
  // `reply` gets its response on this coalescer's I/O thread. The request
  // must stay as it is until then (a session's own, which it reuses for its
  // next request only once it has answered this one).
  void Add(const RoutedRequest& request, Reply reply);

 private:
  struct Pending {
    RoutedRequest routed;
    Reply reply;
  };

  void Flush();
  // Whether a pass of `bytes` of bodies is committed on the I/O thread.
  bool CommitsInline(size_t bytes) const;
  // Commits through Api::HandleAllAsync: no thread waits for the disk. On
  // any thread; the answers are made on the I/O thread.
  void CommitAsync(std::vector<Pending> batch);
  static std::vector<std::vector<Pending>> ByStream(std::vector<Pending> batch);
  static std::vector<HttpResponse> Commit(Api& api, const std::vector<Pending>& batch);
  static void Answer(std::vector<Pending>& batch, std::vector<HttpResponse> responses);

  Api& api_;
  boost::asio::io_context& io_;
  boost::asio::thread_pool& blocking_;
  const bool commit_inline_;
  std::atomic<int>& async_passes_;

  // The storage of the last pass committed on the I/O thread, emptied:
  // the next pass gathers into it instead of growing a vector afresh.
  // Only Flush (on the I/O thread) touches it.
  std::vector<Pending> spare_;

  Mutex mu_;
  std::vector<Pending> pending_ ABSL_GUARDED_BY(mu_);
  size_t pending_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  bool flush_posted_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_PUBLISH_COALESCER_H_
