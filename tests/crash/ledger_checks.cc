#include "keel/tests/crash/ledger_checks.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/crash/endpoint.h"

namespace keel::crash_test {

absl::StatusOr<std::vector<StreamReplay>> ReplayStreams(const Endpoint& endpoint,
                                                        const std::vector<std::string>& streams) {
  EndpointClient client(endpoint);
  std::vector<StreamReplay> replays;
  for (const std::string& stream : streams) {
    absl::StatusOr<std::vector<boost::json::object>> events =
        daemon_test::ReplayAll(client.http(), stream);
    if (!events.ok()) return events.status();
    StreamReplay& replay = replays.emplace_back(StreamReplay{.stream = stream, .events = {}});
    for (const boost::json::object& event : *events) {
      absl::StatusOr<EventIdentity> identity = IdentityOf(event);
      if (!identity.ok()) return identity.status();
      replay.events.push_back(*std::move(identity));
    }
  }
  return replays;
}

void CheckStored(const std::vector<StreamReplay>& replays, const std::vector<Receipt>& receipts,
                 Failures& failures) {
  // stream -> key -> the acknowledged event.
  std::map<std::string, std::map<std::string, EventIdentity>> acknowledged;
  for (const Receipt& receipt : receipts) {
    auto [it, added] = acknowledged[receipt.stream].emplace(receipt.event.key, receipt.event);
    if (!added && !(it->second == receipt.event)) {
      failures.Add("stored events",
                   absl::StrCat(receipt.stream, ": two receipts for one key: ",
                                Describe(it->second), " and ", Describe(receipt.event)));
    }
  }
  for (const StreamReplay& replay : replays) {
    std::map<std::string, EventIdentity>& expected = acknowledged[replay.stream];
    std::map<std::string, uint64_t> stored;  // key -> sequence
    for (size_t i = 0; i < replay.events.size(); ++i) {
      const EventIdentity& event = replay.events[i];
      if (event.sequence != i + 1) {
        failures.Add("stored events",
                     absl::StrCat(replay.stream, ": replay has ", Describe(event), " at position ",
                                  i + 1, " (sequences must be 1..N without a gap)"));
      }
      if (auto [it, added] = stored.emplace(event.key, event.sequence); !added) {
        failures.Add("stored events",
                     absl::StrCat(replay.stream, ": key ", event.key, " stored twice, at #",
                                  it->second, " and #", event.sequence));
      }
      auto receipt = expected.find(event.key);
      if (receipt == expected.end()) {
        failures.Add("stored events", absl::StrCat(replay.stream, ": ", Describe(event),
                                                   " is stored but was never acknowledged"));
      } else if (!(receipt->second == event)) {
        failures.Add("stored events",
                     absl::StrCat(replay.stream, ": acknowledged as ", Describe(receipt->second),
                                  ", stored as ", Describe(event)));
      }
    }
    for (const auto& [key, event] : expected) {
      if (!stored.contains(key)) {
        failures.Add("stored events", absl::StrCat(replay.stream, ": acknowledged ",
                                                   Describe(event), " is not stored"));
      }
    }
  }
  for (const auto& [stream, expected] : acknowledged) {
    bool replayed = false;
    for (const StreamReplay& replay : replays) replayed = replayed || replay.stream == stream;
    if (!replayed)
      failures.Add("stored events", absl::StrCat("receipts of a stream never replayed: ", stream));
  }
}

void CheckFollowed(const std::vector<EventIdentity>& followed, const StreamReplay& replay,
                   Failures& failures) {
  if (followed == replay.events) return;
  size_t same = 0;
  while (same < followed.size() && same < replay.events.size() &&
         followed[same] == replay.events[same]) {
    ++same;
  }
  failures.Add(
      "SSE followers",
      absl::StrCat(replay.stream, ": the SSE follower received ", followed.size(),
                   " events, the stream has ", replay.events.size(), "; they agree up to #", same,
                   same < followed.size()
                       ? absl::StrCat(", then it received ", Describe(followed[same]))
                       : "",
                   same < replay.events.size()
                       ? absl::StrCat(" where the stream has ", Describe(replay.events[same]))
                       : ""));
}

void CheckHandled(const std::string& group, const GroupStream& consumed, const StreamReplay& replay,
                  Failures& failures) {
  std::vector<int> times(replay.events.size() + 1, 0);
  for (const EventIdentity& event : consumed.handled) {
    if (event.sequence == 0 || event.sequence > replay.events.size() ||
        !(replay.events[event.sequence - 1] == event)) {
      failures.Add("consumer group",
                   absl::StrCat(replay.stream, ": group ", group, " handled ", Describe(event),
                                ", which the stream does not hold"));
      continue;
    }
    ++times[event.sequence];
  }
  for (size_t sequence = 1; sequence < times.size(); ++sequence) {
    if (times[sequence] == 0) {
      failures.Add("consumer group",
                   absl::StrCat(replay.stream, ": group ", group, " never handled ",
                                Describe(replay.events[sequence - 1])));
    }
  }
  for (size_t i = 1; i < consumed.committed.size(); ++i) {
    if (consumed.committed[i] < consumed.committed[i - 1]) {
      failures.Add("consumer group",
                   absl::StrCat(replay.stream, ": group ", group, " committed position went from #",
                                consumed.committed[i - 1], " back to #", consumed.committed[i]));
    }
  }
  if (consumed.last_committed != replay.events.size()) {
    failures.Add("consumer group",
                 absl::StrCat(replay.stream, ": group ", group, " committed #",
                              consumed.last_committed, " of ", replay.events.size()));
  }
}

}  // namespace keel::crash_test
