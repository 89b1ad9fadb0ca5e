#include "keel/drivers/jetstream/request_mux.h"

#include <nats/nats.h>

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"

namespace keel::jetstream {
namespace {

// How long the destructor waits for the subscription's callback thread.
constexpr absl::Duration kDrain = absl::Seconds(5);

std::string LastError(natsStatus status) {
  const char* text = nats_GetLastError(nullptr);
  if (text != nullptr && *text != '\0') return text;
  return natsStatus_GetText(status);
}

}  // namespace

absl::StatusOr<std::unique_ptr<RequestMux>> RequestMux::Start(natsConnection* connection) {
  std::unique_ptr<RequestMux> mux(new RequestMux(connection));
  natsInbox* inbox = nullptr;
  natsStatus status = natsInbox_Create(&inbox);
  if (status == NATS_OK) {
    mux->prefix_ = absl::StrCat(inbox, ".");
    natsInbox_Destroy(inbox);
    const std::string filter = mux->prefix_ + "*";
    status = natsConnection_Subscribe(&mux->sub_, connection, filter.c_str(), &RequestMux::OnReply,
                                      mux.get());
  }
  if (status != NATS_OK) {
    mux->completed_.Notify();
    return Unavailable(
        absl::StrCat("jetstream: cannot subscribe to a reply inbox: ", LastError(status)));
  }
  // A reply is never dropped for a slow reader (a dropped reply would be an
  // unknown outcome): the callback only hands it over.
  natsSubscription_SetPendingLimits(mux->sub_, -1, -1);
  natsSubscription_SetOnCompleteCB(mux->sub_, &RequestMux::OnComplete, mux.get());
  return mux;
}

RequestMux::~RequestMux() {
  Close();
  if (sub_ != nullptr) {
    natsSubscription_Unsubscribe(sub_);
    // Unsubscribing a closed connection's subscription fails, but its
    // callback thread ends either way.
    completed_.WaitForNotificationWithTimeout(kDrain);
    natsSubscription_Destroy(sub_);
  }
}

void RequestMux::Close() {
  absl::flat_hash_map<uint64_t, Pending*> waiting;
  {
    MutexLock lock(&mu_);
    closed_ = true;
    waiting.swap(pending_);
  }
  for (auto& [id, pending] : waiting) {
    pending->reply.kind = NatsReply::Kind::kClosed;
    pending->reply.problem = "the connection is closed";
    pending->answered.Post();  // The last use of `pending`.
  }
}

void RequestMux::OnComplete(void* closure) {
  static_cast<RequestMux*>(closure)->completed_.Notify();
}

void RequestMux::OnReply(natsConnection*, natsSubscription*, natsMsg* msg, void* closure) {
  auto* mux = static_cast<RequestMux*>(closure);
  const absl::string_view subject = natsMsg_GetSubject(msg);
  uint64_t id = 0;
  if (subject.size() > mux->prefix_.size() &&
      absl::SimpleAtoi(subject.substr(mux->prefix_.size()), &id)) {
    mux->Answer(id, msg);
  }
  natsMsg_Destroy(msg);
}

void RequestMux::Answer(uint64_t id, natsMsg* msg) {
  NatsReply reply;
  if (natsMsg_IsNoResponders(msg)) {
    reply.kind = NatsReply::Kind::kNoResponders;
    reply.problem = natsStatus_GetText(NATS_NO_RESPONDERS);
  } else {
    reply.kind = NatsReply::Kind::kReplied;
    reply.data.assign(natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
  }
  Pending* pending = nullptr;
  {
    MutexLock lock(&mu_);
    auto it = pending_.find(id);
    if (it == pending_.end()) return;  // Timed out meanwhile.
    pending = it->second;
    pending_.erase(it);
  }
  pending->reply = std::move(reply);
  pending->answered.Post();  // The last use of `pending`.
}

NatsReply RequestMux::Request(absl::string_view subject, const NatsHeaders& headers,
                              absl::string_view data, absl::Duration timeout) {
  NatsReply reply;
  const uint64_t id = next_id_.fetch_add(1) + 1;
  const std::string reply_subject = absl::StrCat(prefix_, id);
  const std::string subject_text(subject);
  natsMsg* msg = nullptr;
  natsStatus status = natsMsg_Create(&msg, subject_text.c_str(), reply_subject.c_str(), data.data(),
                                     static_cast<int>(data.size()));
  for (const auto& [key, value] : headers) {
    if (status != NATS_OK) break;
    status = natsMsgHeader_Add(msg, key.c_str(), value.c_str());
  }
  Pending pending;
  {
    MutexLock lock(&mu_);
    if (closed_) status = NATS_CONNECTION_CLOSED;
    if (status == NATS_OK) pending_.emplace(id, &pending);
  }
  // Registered before it is sent: the reply may come before the publish
  // returns.
  if (status == NATS_OK) status = natsConnection_PublishMsg(connection_, msg);
  natsMsg_Destroy(msg);
  if (status != NATS_OK) {
    {
      MutexLock lock(&mu_);
      pending_.erase(id);
    }
    reply.kind =
        status == NATS_CONNECTION_CLOSED ? NatsReply::Kind::kClosed : NatsReply::Kind::kFailed;
    reply.problem = LastError(status);
    return reply;
  }
  if (!pending.answered.Wait(std::max(timeout, absl::Milliseconds(1)))) {
    MutexLock lock(&mu_);
    if (pending_.erase(id) == 1) {
      reply.kind = NatsReply::Kind::kTimedOut;
      reply.problem = natsStatus_GetText(NATS_TIMEOUT);
      return reply;
    }
    // Answered just now: wait for the hand-over to finish.
    pending.answered.Wait();
  }
  return std::move(pending.reply);
}

}  // namespace keel::jetstream
