#include "keel/tests/crash/group_consumer.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"

namespace keel::crash_test {
namespace {

constexpr char kKind[] = "consumer group";

namespace json = boost::json;

// Short, so that a lease granted by a consume whose answer a kill took
// holds the group up only briefly. A commit after the lease expired is
// still accepted when nobody took the page since (rfcs/0005 rule 4).
constexpr int kLeaseMs = 500;

bool Lost(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status);
}

}  // namespace

GroupConsumer::GroupConsumer(std::vector<std::string> streams, std::string group,
                             const Endpoint& endpoint, Failures& failures, const FinalHeads& heads,
                             uint64_t seed)
    : stream_names_(std::move(streams)),
      group_(std::move(group)),
      endpoint_(endpoint),
      client_(endpoint),
      failures_(failures),
      heads_(heads),
      rng_(seed) {
  for (const std::string& stream : stream_names_) streams_[stream];
}

std::string GroupConsumer::Target(const std::string& stream, const std::string& action) const {
  return client::BuildTarget({"v1", "streams", stream, "groups", group_ + action});
}

bool GroupConsumer::CommittedFinalHeads() const {
  for (const auto& [stream, state] : streams_) {
    const std::optional<uint64_t> head = heads_.Of(stream);
    if (!head.has_value() || state.last_committed < *head) return false;
  }
  return true;
}

void GroupConsumer::Run(const std::atomic<bool>& abandon) {
  starts_seen_ = endpoint_.starts();
  absl::Time give_up = absl::Now() + daemon_test::kWait;
  while (!abandon.load() && !CommittedFinalHeads()) {
    if (absl::Now() > give_up) {
      failures_.Add(kKind, absl::StrCat("group ", group_, ": no progress for ",
                                        absl::FormatDuration(daemon_test::kWait)));
      return;
    }
    bool waiting = false;
    if (const int starts = endpoint_.starts(); starts != starts_seen_) {
      const Step step = CheckCommittedPositions();
      if (step == Step::kFailed) return;
      if (step == Step::kAdvanced) {
        starts_seen_ = starts;
        ++counts_.restarts_seen;
      }
      waiting = step == Step::kWaiting;
    }
    for (const std::string& stream : stream_names_) {
      if (waiting) break;
      const Step step = ConsumeOnce(stream);
      if (step == Step::kFailed) return;
      waiting = step == Step::kWaiting;
    }
    if (waiting) {
      absl::SleepFor(kRetryWait);
    } else {
      give_up = absl::Now() + daemon_test::kWait;
    }
  }
}

GroupConsumer::Step GroupConsumer::ConsumeOnce(const std::string& stream) {
  GroupStream& state = streams_[stream];
  const std::optional<uint64_t> head = heads_.Of(stream);
  if (head.has_value() && state.last_committed >= *head) return Step::kCaughtUp;
  const int limit = std::uniform_int_distribution<int>(1, 100)(rng_);
  absl::StatusOr<client::ClientResponse> response = client_.http().PostJson(
      Target(stream, ":consume"),
      json::serialize(json::object{{"limit", limit}, {"leaseMs", kLeaseMs}}));
  if (!response.ok() && Lost(response.status())) {
    ++counts_.unknown_outcomes;
    return Step::kWaiting;
  }
  if (response.ok() && response->status == 503) return Step::kWaiting;
  if (!response.ok() || response->status != 200) {
    failures_.Add(kKind,
                  absl::StrCat("group ", group_, " on ", stream, ": consume answered ",
                               response.ok() ? response->body : response.status().ToString()));
    return Step::kFailed;
  }
  const json::object page = json::parse(response->body).as_object();
  if (page.contains("gap")) {
    failures_.Add(kKind, absl::StrCat("group ", group_, " on ", stream,
                                      ": a page with a gap: ", response->body));
  }
  const json::array& events = page.at("events").as_array();
  if (events.empty()) {
    if (!page.contains("busyUntil")) return Step::kCaughtUp;
    ++counts_.busy;
    return Step::kWaiting;
  }
  ++counts_.pages;
  uint64_t expected = state.last_committed + 1;
  for (const json::value& value : events) {
    absl::StatusOr<EventIdentity> event = IdentityOf(value.as_object());
    if (!event.ok()) {
      failures_.Add(kKind,
                    absl::StrCat("group ", group_, " on ", stream, ": ", event.status().message()));
      return Step::kFailed;
    }
    // The page starts right after the committed position: an earlier event
    // means the cursor went back, a later one that events were skipped.
    if (event->sequence != expected) {
      failures_.Add(kKind, absl::StrCat("group ", group_, " on ", stream, ": handed ",
                                        Describe(*event), " where #", expected,
                                        " was due (committed #", state.last_committed, ")"));
    }
    expected = event->sequence + 1;
    state.handled.push_back(*std::move(event));
    ++counts_.handled;
  }
  const json::object& lease = page.at("lease").as_object();
  return CommitUntilAnswered(stream, std::string(lease.at("to").as_string()),
                             lease.at("token").to_number<uint64_t>(),
                             state.handled.back().sequence);
}

GroupConsumer::Step GroupConsumer::CommitUntilAnswered(const std::string& stream,
                                                       const std::string& cursor, uint64_t token,
                                                       uint64_t last_sequence) {
  const std::string body = json::serialize(json::object{{"cursor", cursor}, {"token", token}});
  const absl::Time give_up = absl::Now() + daemon_test::kWait;
  while (true) {
    absl::StatusOr<client::ClientResponse> response =
        client_.http().PostJson(Target(stream, ":commit"), body);
    if (response.ok() && response->status == 200) {
      const uint64_t committed =
          json::parse(response->body).at("committedSequence").to_number<uint64_t>();
      ++counts_.commits;
      if (committed != last_sequence) {
        failures_.Add(kKind, absl::StrCat("group ", group_, " on ", stream, ": committing #",
                                          last_sequence, " answered #", committed));
      }
      RecordCommitted(stream, committed, "a commit");
      return Step::kAdvanced;
    }
    if (response.ok() && response->status != 503) {
      failures_.Add(kKind, absl::StrCat("group ", group_, " on ", stream, ": commit of #",
                                        last_sequence, " with token ", token, " answered ",
                                        response->status, ": ", response->body));
      return Step::kFailed;
    }
    if (!response.ok() && !Lost(response.status())) {
      failures_.Add(kKind, absl::StrCat("group ", group_, " on ", stream,
                                        ": commit: ", response.status().ToString()));
      return Step::kFailed;
    }
    if (!response.ok()) ++counts_.unknown_outcomes;
    if (absl::Now() > give_up) {
      failures_.Add(kKind,
                    absl::StrCat("group ", group_, " on ", stream, ": no answer to a commit for ",
                                 absl::FormatDuration(daemon_test::kWait)));
      return Step::kFailed;
    }
    absl::SleepFor(kRetryWait);
  }
}

GroupConsumer::Step GroupConsumer::CheckCommittedPositions() {
  for (const std::string& stream : stream_names_) {
    absl::StatusOr<client::ClientResponse> response =
        client_.http().Get(client::BuildTarget({"v1", "streams", stream, "groups", group_}));
    if (!response.ok() && Lost(response.status())) return Step::kWaiting;
    if (response.ok() && response->status == 503) return Step::kWaiting;
    const uint64_t last = streams_[stream].last_committed;
    if (response.ok() && response->status == 404 && last == 0) continue;  // Not created yet.
    if (!response.ok() || response->status != 200) {
      failures_.Add(kKind,
                    absl::StrCat("group ", group_, " on ", stream, ": after a restart (committed #",
                                 last, ") it answered ",
                                 response.ok() ? response->body : response.status().ToString()));
      return Step::kFailed;
    }
    RecordCommitted(stream,
                    json::parse(response->body).at("committedSequence").to_number<uint64_t>(),
                    "a restart");
  }
  return Step::kAdvanced;
}

void GroupConsumer::RecordCommitted(const std::string& stream, uint64_t sequence,
                                    const std::string& how) {
  GroupStream& state = streams_[stream];
  if (sequence < state.last_committed) {
    failures_.Add(kKind,
                  absl::StrCat("group ", group_, " on ", stream, ": committed position back from #",
                               state.last_committed, " to #", sequence, " after ", how));
  }
  state.committed.push_back(sequence);
  state.last_committed = std::max(state.last_committed, sequence);
}

}  // namespace keel::crash_test
