#include "keel/drivers/jetstream/live_feed.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "keel/core/status_macros.h"

namespace keel::jetstream {
namespace {

// How long the feed waits for a message before it looks for work.
constexpr absl::Duration kPoll = absl::Milliseconds(50);
// How often an idle feed checks that it lost no last record.
constexpr absl::Duration kTailCheck = absl::Seconds(1);
// How long a writer waits for its record before asking for it to be read,
// and how long it waits at most.
constexpr absl::Duration kLate = absl::Milliseconds(200);
constexpr absl::Duration kGiveUp = absl::Seconds(5);

}  // namespace

LiveFeed::LiveFeed(NatsClient& client, JetStreamApi& api, RecordReader& reader,
                   const BusLayout& layout, FanOut& fanout, Logger& logger, Health& health)
    : client_(client),
      api_(api),
      reader_(reader),
      layout_(layout),
      fanout_(fanout),
      logger_(logger),
      health_(health) {}

LiveFeed::~LiveFeed() { Stop(); }

absl::Status LiveFeed::Start() {
  // Subscribe before reading where each stream stands: a record stored in
  // between is then both read and queued, and the queued copy is dropped.
  KEEL_ASSIGN_OR_RETURN(subscription_, client_.Subscribe(layout_.live_filter()));
  KEEL_ASSIGN_OR_RETURN(std::optional<StreamSnapshot> snapshot, api_.Info(layout_.event_filter()));
  if (!snapshot) {
    return absl::NotFoundError(absl::StrCat("jetstream: stream ", api_.stream(), " is gone"));
  }
  seen_js_ = snapshot->last_sequence;
  for (const std::string& subject : snapshot->matching_subjects) {
    std::optional<std::string> stream = layout_.StreamOfSubject(subject);
    if (!stream) continue;
    KEEL_ASSIGN_OR_RETURN(std::optional<StoredRecord> last, reader_.Last(*stream));
    if (!last) continue;
    MutexLock lock(&mu_);
    Entry& entry = entries_[*stream];
    entry.delivered_js = entry.bounds_js = last->js_seq;
    entry.next = last->header.next();
    entry.bounds = last->header.bounds();
  }
  thread_ = std::thread([this] { Run(); });
  return absl::OkStatus();
}

void LiveFeed::Stop() {
  stop_.store(true);
  {
    MutexLock lock(&mu_);
    for (auto& [stream, entry] : entries_) {
      for (Waiter* waiter : entry.waiters) waiter->delivered.Signal();
    }
  }
  if (thread_.joinable()) thread_.join();
  subscription_.reset();
}

void LiveFeed::NoteStored(absl::string_view stream, uint64_t js_seq, const RecordHeader& header) {
  MutexLock lock(&mu_);
  Entry& entry = entries_[stream];
  if (js_seq <= entry.bounds_js) return;
  entry.bounds_js = js_seq;
  entry.bounds = header.bounds();
}

void LiveFeed::AwaitDelivered(absl::string_view stream, uint64_t js_seq) {
  const absl::Time start = absl::Now();
  Waiter self;
  self.js_seq = js_seq;
  MutexLock lock(&mu_);
  auto delivered = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return stop_.load() || entries_[stream].delivered_js >= js_seq;
  };
  if (delivered()) return;
  entries_[stream].waiters.push_back(&self);
  bool asked = false;
  while (!delivered()) {
    const absl::Duration waited = absl::Now() - start;
    if (waited >= kGiveUp) break;
    if (waited >= kLate && !asked) {
      wanted_.insert(std::string(stream));
      asked = true;
    }
    self.delivered.WaitWithTimeout(&mu_, asked ? kGiveUp - waited : kLate - waited);
  }
  std::vector<Waiter*>& waiters = entries_[stream].waiters;
  waiters.erase(std::find(waiters.begin(), waiters.end(), &self));
}

void LiveFeed::DeliveredLocked(Entry& entry, uint64_t js_seq) {
  entry.delivered_js = std::max(entry.delivered_js, js_seq);
  for (Waiter* waiter : entry.waiters) {
    if (waiter->js_seq <= entry.delivered_js) waiter->delivered.Signal();
  }
}

std::vector<std::pair<std::string, LogBounds>> LiveFeed::Streams() const {
  std::vector<std::pair<std::string, LogBounds>> out;
  MutexLock lock(&mu_);
  out.reserve(entries_.size());
  for (const auto& [stream, entry] : entries_) {
    if (entry.bounds_js != 0) out.emplace_back(stream, entry.bounds);
  }
  return out;
}

void LiveFeed::Run() {
  absl::Time last_activity = absl::Now();
  absl::Time last_check = absl::Now();
  while (!stop_.load()) {
    absl::StatusOr<std::optional<NatsMessage>> message = subscription_->Next(kPoll);
    if (!message.ok()) return;  // The connection closed.
    if (*message) {
      last_activity = absl::Now();
      std::optional<std::string> stream = layout_.StreamOfSubject((*message)->subject);
      const std::string* sequence = FindHeader((*message)->headers, "Nats-Sequence");
      StoredMessage stored;
      if (stream && sequence != nullptr && absl::SimpleAtoi(*sequence, &stored.sequence)) {
        stored.headers = std::move((*message)->headers);
        stored.data = std::move((*message)->data);
        absl::StatusOr<StoredRecord> record = ToRecord(std::move(stored), *stream);
        if (record.ok()) {
          Handle(*stream, *record, /*may_read_missed=*/true);
        } else {
          logger_.Warn(absl::StrCat("keel jetstream: live feed: ", record.status().message()));
        }
      }
    }
    absl::flat_hash_set<std::string> wanted;
    {
      MutexLock lock(&mu_);
      wanted.swap(wanted_);
    }
    for (const std::string& stream : wanted) ReadMissed(stream, UINT64_MAX);
    const absl::Time now = absl::Now();
    if (now - last_activity >= kTailCheck && now - last_check >= kTailCheck) {
      last_check = now;
      CheckTail();
    }
  }
}

void LiveFeed::Handle(const std::string& stream, const StoredRecord& record, bool may_read_missed) {
  seen_js_ = std::max(seen_js_, record.js_seq);
  reader_.Note(stream, record.header, record.js_seq);
  bool missed = false;
  {
    MutexLock lock(&mu_);
    const Entry& entry = entries_[stream];
    if (record.js_seq <= entry.delivered_js) return;
    missed = may_read_missed && entry.next != 0 && record.header.seq > entry.next;
  }
  if (missed) ReadMissed(stream, record.js_seq);
  uint64_t from = 0;  // The first sequence to deliver.
  {
    MutexLock lock(&mu_);
    Entry& entry = entries_[stream];
    if (record.js_seq <= entry.delivered_js) return;
    if (entry.next != 0 && record.header.seq < entry.next) {
      logger_.Warn(absl::StrCat("keel jetstream: stream '", stream, "': message ", record.js_seq,
                                " repeats events from ", record.header.seq,
                                "; it is not delivered"));
      DeliveredLocked(entry, record.js_seq);
      return;
    }
    from = record.header.seq;
  }
  if (record.header.count > 0 && fanout_.HasSubscribers(stream)) {
    std::vector<Event> events;
    events.reserve(record.header.count);
    absl::StatusOr<bool> decoded = DecodeRecordEvents(
        record.data, record.header, stream, from, record.header.next() - 1,
        [&]() -> Event& { return events.emplace_back(); }, [] { return true; });
    if (decoded.ok()) {
      fanout_.Deliver(stream, events);
    } else {
      logger_.Warn(absl::StrCat("keel jetstream: live feed: ", decoded.status().message()));
    }
  }
  MutexLock lock(&mu_);
  Entry& entry = entries_[stream];
  entry.next = record.header.next();
  if (record.js_seq > entry.bounds_js) {
    entry.bounds_js = record.js_seq;
    entry.bounds = record.header.bounds();
  }
  DeliveredLocked(entry, record.js_seq);
}

void LiveFeed::ReadMissed(const std::string& stream, uint64_t below) {
  uint64_t from = 0;
  {
    MutexLock lock(&mu_);
    from = entries_[stream].delivered_js + 1;
  }
  while (!stop_.load()) {
    absl::StatusOr<std::optional<StoredRecord>> record =
        health_.Observe([&] { return reader_.NextFrom(stream, from); });
    if (!record.ok() || !*record || (*record)->js_seq >= below) return;
    Handle(stream, **record, /*may_read_missed=*/false);
    from = (*record)->js_seq + 1;
  }
}

void LiveFeed::CheckTail() {
  // Stream info is answered even without quorum: only its failure says
  // something about the stream's health.
  const uint64_t ticket = health_.Start();
  absl::StatusOr<std::optional<StreamSnapshot>> snapshot = api_.Info();
  if (!snapshot.ok()) health_.Note(ticket, snapshot.status());
  if (!snapshot.ok() || !*snapshot) return;
  const uint64_t last = (*snapshot)->last_sequence;
  uint64_t from = seen_js_ + 1;
  while (from <= last && !stop_.load()) {
    absl::StatusOr<std::optional<StoredMessage>> message =
        health_.Observe([&] { return api_.NextBySubject(layout_.event_filter(), from); });
    if (!message.ok()) return;
    if (!*message) break;
    from = (*message)->sequence + 1;
    std::optional<std::string> stream = layout_.StreamOfSubject((*message)->subject);
    if (!stream) continue;
    absl::StatusOr<StoredRecord> record = ToRecord(**std::move(message), *stream);
    if (record.ok()) Handle(*stream, *record, /*may_read_missed=*/true);
  }
  seen_js_ = std::max(seen_js_, last);
}

}  // namespace keel::jetstream
