// Internal: the threads that serve SSE connections, apart from the
// request/response threads (server.h says why).
//
// Each thread has an I/O context of its own and the broadcasts
// (sse_broadcast.h) of the streams its sessions follow, so a session and
// its stream's broadcast run on one thread and need no strand or lock. New
// sessions go to the threads in turn.
//
// Thread safety: Next() from any thread; Run/Stop from the server's control
// thread.
#ifndef KEEL_CMD_KEEL_SERVER_SSE_THREADS_H_
#define KEEL_CMD_KEEL_SERVER_SSE_THREADS_H_

#include <atomic>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <memory>
#include <thread>
#include <vector>

#include "keel/cmd/keel/server/sse_broadcast.h"

namespace keel::server {

class SseThreads {
 public:
  struct Thread {
    Thread() : context(1), work(boost::asio::make_work_guard(context)) {}
    boost::asio::io_context context;
    // Idle threads keep running until Stop().
    boost::asio::executor_work_guard<boost::asio::io_context::executor_type> work;
    SseBroadcasts broadcasts;  // Destroyed before the context its timers use.
  };

  explicit SseThreads(int count) {
    for (int i = 0; i < std::max(1, count); ++i) threads_.push_back(std::make_unique<Thread>());
  }

  Thread& Next() { return *threads_[next_.fetch_add(1) % threads_.size()]; }

  // Starts one std::thread per SSE thread and adds it to `threads`.
  void Run(std::vector<std::thread>& threads) {
    for (auto& thread : threads_) {
      threads.emplace_back([&context = thread->context] { context.run(); });
    }
  }

  void Stop() {
    for (auto& thread : threads_) {
      thread->work.reset();
      thread->context.stop();
    }
  }

 private:
  std::vector<std::unique_ptr<Thread>> threads_;
  std::atomic<size_t> next_{0};
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_SSE_THREADS_H_
