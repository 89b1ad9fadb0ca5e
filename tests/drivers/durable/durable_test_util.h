// Helpers shared by the durable driver tests: open a bus over a given store,
// publish numbered events, read a whole stream back.
#ifndef KEEL_TESTS_DRIVERS_DURABLE_DURABLE_TEST_UTIL_H_
#define KEEL_TESTS_DRIVERS_DURABLE_DURABLE_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "keel/core/event_bus.h"
#include "keel/drivers/durable/durable_bus.h"
#include "keel/drivers/durable/key_layout.h"
#include "keel/statestore/state_store.h"

namespace keel::testing {

inline DurableOptions Options(SyncMode sync = SyncMode::kAlways) {
  DurableOptions options;
  options.sync = sync;
  return options;
}

inline Event NewEvent(absl::string_view stream, int n) {
  Event event;
  event.stream = std::string(stream);
  event.type = "test.numbered";
  event.payload = std::to_string(n);
  return event;
}

// Writes entries of `stream` at `sequences` (event n carries payload "n")
// straight to the store, without touching its head: what a crash that kept
// some unsynced writes and lost others leaves behind.
inline absl::Status WriteEntries(StateStore& store, absl::string_view stream,
                                 std::initializer_list<uint64_t> sequences) {
  WriteBatch entries;
  for (uint64_t seq : sequences) {
    Event event = NewEvent(stream, static_cast<int>(seq));
    event.time = absl::Now();
    entries.Put(durable::EntryKey(stream, seq), durable::EncodeEntry(event));
  }
  return store.Write(entries, WriteOptions{.sync = true});
}

// Every event of `stream`, read through the public Replayer API.
inline absl::StatusOr<std::vector<Event>> ReadAll(EventBus& bus, absl::string_view stream) {
  std::vector<Event> all;
  ReplayRequest request;
  request.stream = std::string(stream);
  request.limit = 1000;
  while (true) {
    absl::StatusOr<ReplayPage> page = bus.replayer()->Replay(request);
    if (!page.ok()) return page.status();
    for (Event& event : page->events) all.push_back(std::move(event));
    if (page->reached_end) return all;
    request.after = Position::After(page->next);
  }
}

// The sequences of `events`, for comparing with ElementsAre / a range.
inline std::vector<uint64_t> Sequences(const std::vector<Event>& events) {
  std::vector<uint64_t> sequences;
  for (const Event& event : events) sequences.push_back(event.sequence);
  return sequences;
}

inline std::vector<uint64_t> Range(uint64_t first, uint64_t last) {
  std::vector<uint64_t> range;
  for (uint64_t s = first; s <= last; ++s) range.push_back(s);
  return range;
}

}  // namespace keel::testing

#endif  // KEEL_TESTS_DRIVERS_DURABLE_DURABLE_TEST_UTIL_H_
