// Api::HandleAllAsync: the publishes an I/O thread read in one pass, joined
// per stream as in HandleAll, but committed without blocking the I/O thread
// or parking a pool thread per commit (EventBus::PublishBatchAsync). With
// sync=always that spares each publish the context switches of the thread
// hand-offs around a waiting thread.
#include <atomic>
#include <memory>
#include <utility>

#include "keel/cmd/keel/server/api.h"

namespace keel::server {

// The answers of one HandleAllAsync call, filled in from several threads
// (each index by one), handed on when the last part is answered.
struct Api::AsyncPass {
  AsyncPass(size_t count, AllDone done) : responses(count), done(std::move(done)) {}

  void Add() { outstanding.fetch_add(1, std::memory_order_relaxed); }
  void Finish() {
    if (outstanding.fetch_sub(1, std::memory_order_acq_rel) == 1) done(std::move(responses));
  }

  std::vector<HttpResponse> responses;
  std::atomic<size_t> outstanding{1};  // Parts not yet answered, plus the planner's own.
  AllDone done;
};

void Api::HandleAllAsync(absl::Span<const RoutedRequest> requests, const Executor& blocking,
                         const Executor& complete_on, AllDone done) {
  auto pass = std::make_shared<AsyncPass>(requests.size(), std::move(done));
  std::vector<std::optional<ParsedPublish>> parsed(requests.size());
  auto alone = [&](size_t i, std::function<HttpResponse()> answer) {
    pass->Add();
    blocking([pass, i, answer = std::move(answer)] {
      pass->responses[i] = answer();
      pass->Finish();
    });
  };
  for (std::vector<size_t>& group : PlanJoined(requests, parsed, pass->responses, alone)) {
    CommitJoinedAsync(pass, std::move(group), parsed, blocking, complete_on);
  }
  pass->Finish();
}

void Api::CommitJoinedAsync(const std::shared_ptr<AsyncPass>& pass, std::vector<size_t> indices,
                            std::vector<std::optional<ParsedPublish>>& parsed,
                            const Executor& blocking, const Executor& complete_on) {
  auto group = std::make_shared<std::vector<ParsedPublish>>(TakeJoined(indices, parsed));
  PublishOptions options;
  std::vector<Event> events = JoinedEvents(absl::MakeSpan(*group), options);
  auto answer = [this, pass, group, indices](absl::StatusOr<std::vector<Receipt>> receipts,
                                             const Executor& blocking) {
    std::optional<std::vector<HttpResponse>> answers = AnswerJoined(*group, receipts);
    if (!answers) {
      // As PublishTogether: each is retried alone, which may block.
      return blocking([this, pass, group, indices] {
        for (size_t k = 0; k < indices.size(); ++k) {
          const HttpRequest& request = *(*group)[k].request;
          pass->responses[indices[k]] = Guarded([&] { return Serve(request, Resolve(request)); });
        }
        pass->Finish();
      });
    }
    for (size_t k = 0; k < indices.size(); ++k) {
      pass->responses[indices[k]] = Counted(std::move((*answers)[k]));
    }
    pass->Finish();
  };
  pass->Add();
  try {
    bus_.PublishBatchAsync(
        group->front().stream, std::move(events), options,
        [answer, blocking, complete_on](absl::StatusOr<std::vector<Receipt>> receipts) mutable {
          // Answers are made on `complete_on`, not on the bus's committing
          // thread, whose next commit waits for it; that thread keeps no
          // share of the pass.
          complete_on([answer = std::move(answer), blocking = std::move(blocking),
                       receipts = std::move(receipts)]() mutable {
            answer(std::move(receipts), blocking);
          });
        });
  } catch (const std::exception& e) {  // From the driver: see the class comment.
    for (size_t i : indices) pass->responses[i] = Thrown(e);
    pass->Finish();
  }
}

}  // namespace keel::server
