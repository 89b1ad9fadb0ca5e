#include "keel/tests/crash/publisher.h"

#include <boost/json.hpp>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "keel/cmd/keel/client/http_client.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"

namespace keel::crash_test {
namespace {

constexpr char kKind[] = "publishers";

namespace json = boost::json;

json::object EventObject(const std::string& key) {
  return json::object{{"type", "crash.event"}, {"data", json::parse(EventData(key))}};
}

}  // namespace

PublisherCounts& PublisherCounts::operator+=(const PublisherCounts& other) {
  acknowledged += other.acknowledged;
  requests += other.requests;
  unknown_outcomes += other.unknown_outcomes;
  retried += other.retried;
  duplicates += other.duplicates;
  return *this;
}

Publisher::Publisher(int index, std::vector<std::string> streams, const Endpoint& endpoint,
                     Failures& failures, uint64_t seed, PublisherOptions options)
    : index_(index),
      streams_(std::move(streams)),
      client_(endpoint),
      failures_(failures),
      rng_(seed),
      options_(options) {}

void Publisher::Run(const std::atomic<bool>& stop) {
  std::uniform_int_distribution<size_t> pick_stream(0, streams_.size() - 1);
  std::uniform_int_distribution<int> pick_batch(1, options_.max_batch);
  std::uniform_int_distribution<int64_t> pick_pause(0,
                                                    absl::ToInt64Microseconds(options_.max_pause));
  while (!stop.load()) {
    const std::string& stream = streams_[pick_stream(rng_)];
    // Mostly single events (the Idempotency-Key header), sometimes a batch
    // (a key per event in the body).
    const int size = pick_batch(rng_) == 1 ? pick_batch(rng_) : 1;
    std::vector<std::string> keys;
    for (int i = 0; i < size; ++i) keys.push_back(absl::StrCat("p", index_, "-", next_key_++));
    if (!PublishUntilAcknowledged(stream, keys)) return;
    absl::SleepFor(absl::Microseconds(pick_pause(rng_)));
  }
}

bool Publisher::PublishUntilAcknowledged(const std::string& stream,
                                         const std::vector<std::string>& keys) {
  absl::Time give_up = absl::Now() + daemon_test::kWait;
  bool retry = false;
  while (true) {
    switch (Attempt(stream, keys, retry)) {
      case Outcome::kAcknowledged:
        return true;
      case Outcome::kRefused:
        return false;
      case Outcome::kUnknown:
        break;
    }
    if (!retry) counts_.retried += keys.size();
    retry = true;
    if (absl::Now() > give_up) {
      failures_.Add(kKind, absl::StrCat("publisher ", index_, ": no answer to a publish to ",
                                        stream, " for ", absl::FormatDuration(daemon_test::kWait)));
      return false;
    }
    absl::SleepFor(kRetryWait);
  }
}

Publisher::Outcome Publisher::Attempt(const std::string& stream,
                                      const std::vector<std::string>& keys, bool retry) {
  std::string body;
  client::Headers headers;
  if (keys.size() == 1) {
    body = json::serialize(EventObject(keys[0]));
    headers.emplace_back("Idempotency-Key", keys[0]);
  } else {
    json::array events;
    for (const std::string& key : keys) {
      json::object event = EventObject(key);
      event["idempotencyKey"] = key;
      events.push_back(std::move(event));
    }
    body = json::serialize(events);
  }
  ++counts_.requests;
  absl::StatusOr<client::ClientResponse> response =
      daemon_test::PostEvents(client_.http(), stream, body, std::move(headers));
  // A broken connection, or a daemon that is not up (again) yet.
  if (!response.ok()) {
    if (absl::IsUnavailable(response.status()) || absl::IsDeadlineExceeded(response.status())) {
      ++counts_.unknown_outcomes;
      return Outcome::kUnknown;
    }
    failures_.Add(kKind, absl::StrCat("publisher ", index_, ": ", response.status().ToString()));
    return Outcome::kRefused;
  }
  if (response->status == 503) return Outcome::kUnknown;  // Not taking writes yet.
  if (response->status != 201) {
    failures_.Add(kKind, absl::StrCat("publisher ", index_, ": publish to ", stream, " answered ",
                                      response->status, ": ", response->body));
    return Outcome::kRefused;
  }
  Record(stream, keys, response->body, retry);
  return Outcome::kAcknowledged;
}

void Publisher::Record(const std::string& stream, const std::vector<std::string>& keys,
                       const std::string& body, bool retry) {
  const std::string where = absl::StrCat("publisher ", index_, ", stream ", stream, ": ");
  boost::system::error_code ec;
  json::value answer = json::parse(body, ec);
  std::vector<json::object> receipts;
  if (!ec && answer.is_object() && keys.size() == 1) {
    receipts.push_back(answer.as_object());
  } else if (!ec && answer.is_object() && answer.as_object().contains("receipts")) {
    for (const json::value& receipt : answer.at("receipts").as_array()) {
      receipts.push_back(receipt.as_object());
    }
  }
  if (receipts.size() != keys.size()) {
    failures_.Add(kKind, absl::StrCat(where, "expected ", keys.size(), " receipts: ", body));
    return;
  }
  uint64_t& last = last_sequence_[stream];
  for (size_t i = 0; i < keys.size(); ++i) {
    Receipt receipt{.stream = std::string(receipts[i].at("stream").as_string()),
                    .event = {.sequence = receipts[i].at("sequence").to_number<uint64_t>(),
                              .id = std::string(receipts[i].at("id").as_string()),
                              .key = keys[i]},
                    .duplicate = receipts[i].at("duplicate").as_bool()};
    if (receipt.stream != stream) {
      failures_.Add(kKind, absl::StrCat(where, "a receipt of stream ", receipt.stream));
    }
    // A first attempt cannot find its key stored; a batch is stored whole
    // or not at all, so a retry finds all its keys or none.
    if (receipt.duplicate != (retry && receipts[0].at("duplicate").as_bool())) {
      failures_.Add(kKind, absl::StrCat(where, "receipt ", i, " of ", keys.size(),
                                        retry ? " of a retry" : " of a first attempt",
                                        " has duplicate=", receipt.duplicate, ": ", body));
    }
    // Gap-free within a batch, and after everything acknowledged before.
    if (receipt.event.sequence <= last || (i > 0 && receipt.event.sequence != last + 1)) {
      failures_.Add(kKind,
                    absl::StrCat(where, Describe(receipt.event), " acknowledged after #", last));
    }
    last = std::max(last, receipt.event.sequence);
    if (receipt.duplicate) ++counts_.duplicates;
    ++counts_.acknowledged;
    receipts_.push_back(std::move(receipt));
  }
}

}  // namespace keel::crash_test
