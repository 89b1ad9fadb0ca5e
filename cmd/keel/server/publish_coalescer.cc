#include "keel/cmd/keel/server/publish_coalescer.h"

#include <utility>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>

#include "absl/container/flat_hash_map.h"

namespace keel::server {

void PublishCoalescer::Add(const RoutedRequest& request, Reply reply) {
  bool post = false;
  {
    MutexLock lock(&mu_);
    pending_bytes_ += request.request->body.size();
    pending_.push_back(Pending{request, std::move(reply)});
    post = !std::exchange(flush_posted_, true);
  }
  if (post) boost::asio::post(io_, [this] { Flush(); });
}

void PublishCoalescer::Flush() {
  std::vector<Pending> batch = std::move(spare_);
  size_t bytes = 0;
  {
    MutexLock lock(&mu_);
    batch.swap(pending_);
    bytes = std::exchange(pending_bytes_, 0);
    flush_posted_ = false;
  }
  if (CommitsInline(bytes)) {
    std::vector<HttpResponse> responses = Commit(api_, batch);
    Answer(batch, std::move(responses));
    batch.clear();
    if (batch.capacity() <= kKeptPassCapacity) spare_ = std::move(batch);
    return;
  }
  if (api_.PublishesAsync()) {
    // Parsing a large pass would hold up the I/O thread's other sessions.
    if (bytes <= kInlineBodyBytes) return CommitAsync(std::move(batch));
    return boost::asio::post(
        blocking_, [this, batch = std::move(batch)]() mutable { CommitAsync(std::move(batch)); });
  }
  // One pool task per stream: publishes to different streams wait for the
  // disk side by side (where the bus's group commit joins them), not one
  // after another.
  for (std::vector<Pending>& part : ByStream(std::move(batch))) {
    boost::asio::post(blocking_, [this, part = std::move(part)]() mutable {
      std::vector<HttpResponse> responses = Commit(api_, part);
      // One hand-off back to the I/O thread for the part, not one per
      // response: each cross-thread post contends for the I/O context's lock.
      boost::asio::post(io_, [part = std::move(part), responses = std::move(responses)]() mutable {
        Answer(part, std::move(responses));
      });
    });
  }
}

bool PublishCoalescer::CommitsInline(size_t bytes) const {
  return commit_inline_ && bytes <= (api_.PublishesAsync() ? kInlineCommitBytes : kInlineBodyBytes);
}

void PublishCoalescer::CommitAsync(std::vector<Pending> batch) {
  async_passes_.fetch_add(1);
  auto shared = std::make_shared<std::vector<Pending>>(std::move(batch));
  std::vector<RoutedRequest> requests;
  requests.reserve(shared->size());
  for (const Pending& pending : *shared) requests.push_back(pending.routed);
  api_.HandleAllAsync(
      requests,
      [this](std::function<void()> task) { boost::asio::post(blocking_, std::move(task)); },
      [this](std::function<void()> task) { boost::asio::post(io_, std::move(task)); },
      [this, shared](std::vector<HttpResponse> responses) mutable {
        // The batch holds the sessions: it is let go on the I/O thread (at
        // once when this is it, as it usually is), and before the pass stops
        // counting, so that Server::Stop, once the count is 0, joins the
        // thread that may close their sockets.
        boost::asio::dispatch(io_, [this, shared = std::move(shared),
                                    responses = std::move(responses)]() mutable {
          Answer(*shared, std::move(responses));
          shared.reset();
          async_passes_.fetch_sub(1);
        });
      });
}

std::vector<std::vector<PublishCoalescer::Pending>> PublishCoalescer::ByStream(
    std::vector<Pending> batch) {
  std::vector<std::vector<Pending>> parts;
  absl::flat_hash_map<std::string, size_t> part_of;
  for (Pending& pending : batch) {
    const absl::string_view stream = pending.routed.route.params.Get("stream");
    auto [it, added] = part_of.try_emplace(stream, parts.size());
    if (added) parts.emplace_back();
    parts[it->second].push_back(std::move(pending));
  }
  return parts;
}

std::vector<HttpResponse> PublishCoalescer::Commit(Api& api, const std::vector<Pending>& batch) {
  std::vector<RoutedRequest> requests;
  requests.reserve(batch.size());
  for (const Pending& pending : batch) requests.push_back(pending.routed);
  return api.HandleAll(requests);  // Never throws: every request gets its answer.
}

// A reply may run its session on at once (the same thread): the response is
// written and a pipelined request already read is parsed, into the same
// HttpRequest. So nothing may read a publish's request after its reply.
void PublishCoalescer::Answer(std::vector<Pending>& batch, std::vector<HttpResponse> responses) {
  for (size_t i = 0; i < batch.size(); ++i) batch[i].reply(std::move(responses[i]));
}

}  // namespace keel::server
