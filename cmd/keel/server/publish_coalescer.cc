#include "cmd/keel/server/publish_coalescer.h"

#include <utility>

#include <boost/asio/post.hpp>

namespace keel::server {

void PublishCoalescer::Add(HttpRequest request, Reply reply) {
  bool post = false;
  {
    MutexLock lock(&mu_);
    pending_bytes_ += request.body.size();
    pending_.push_back(Pending{std::move(request), std::move(reply)});
    post = !std::exchange(flush_posted_, true);
  }
  if (post) boost::asio::post(io_, [this] { Flush(); });
}

void PublishCoalescer::Flush() {
  std::vector<Pending> batch;
  size_t bytes = 0;
  {
    MutexLock lock(&mu_);
    batch.swap(pending_);
    bytes = std::exchange(pending_bytes_, 0);
    flush_posted_ = false;
  }
  if (commit_inline_ && bytes <= kInlineBodyBytes) {
    std::vector<HttpResponse> responses = Commit(api_, batch);
    return Answer(batch, std::move(responses));
  }
  boost::asio::post(blocking_, [this, batch = std::move(batch)]() mutable {
    std::vector<HttpResponse> responses = Commit(api_, batch);
    // One hand-off back to the I/O thread for the whole batch, not one per
    // response: each cross-thread post contends for the I/O context's lock.
    boost::asio::post(io_, [batch = std::move(batch), responses = std::move(responses)]() mutable {
      Answer(batch, std::move(responses));
    });
  });
}

std::vector<HttpResponse> PublishCoalescer::Commit(Api& api, const std::vector<Pending>& batch) {
  std::vector<const HttpRequest*> requests;
  requests.reserve(batch.size());
  for (const Pending& pending : batch) requests.push_back(&pending.request);
  return api.HandleAll(requests);
}

void PublishCoalescer::Answer(std::vector<Pending>& batch, std::vector<HttpResponse> responses) {
  for (size_t i = 0; i < batch.size(); ++i) batch[i].reply(std::move(responses[i]));
}

}  // namespace keel::server
