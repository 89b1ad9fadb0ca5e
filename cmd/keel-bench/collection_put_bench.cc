#include "keel/cmd/keel-bench/collection_put_bench.h"

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "keel/core/collections.h"
#include "keel/core/driver_factory.h"
#include "keel/core/status_macros.h"

namespace keel::bench {
namespace {

// Document `n`'s JSON of about `bytes` bytes (differs per write).
std::string DocumentBody(uint64_t n, uint64_t bytes) {
  std::string body = absl::StrCat(R"({"write":)", n, R"(,"note":")");
  const size_t filler = bytes > body.size() + 2 ? bytes - body.size() - 2 : 0;
  for (size_t i = 0; i < filler; ++i) body.push_back(static_cast<char>('a' + (n + i) % 26));
  return body + "\"}";
}

// Runs write(n) for every n < writes on `writers` threads (writer w takes
// n = w, w + writers, ...); seconds, or the first error.
absl::StatusOr<double> TimeWrites(const CollectionPutOptions& o,
                                  const std::function<absl::Status(uint64_t)>& write) {
  absl::Mutex mu;
  absl::Status first;
  std::vector<std::thread> threads;
  Stopwatch watch;
  for (int w = 0; w < o.writers; ++w) {
    threads.emplace_back([&, w] {
      for (uint64_t n = static_cast<uint64_t>(w); n < o.writes; n += o.writers) {
        absl::Status status = write(n);
        if (!status.ok()) {
          absl::MutexLock lock(&mu);
          first.Update(status);
          return;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const double seconds = watch.Seconds();
  if (!first.ok()) return first;
  return seconds;
}

}  // namespace

absl::StatusOr<ResultRow> RunCollectionPutCase(const std::string& dir,
                                               const CollectionPutOptions& o, std::ostream& out) {
  KEEL_ASSIGN_OR_RETURN(
      std::unique_ptr<EventBus> bus,
      CreateBus("durable", Config{{"store", "leveldb"}, {"store.path", dir}, {"sync", "none"}}));
  Collections* collections = bus->collections();
  if (collections == nullptr) return absl::InternalError("the durable bus keeps no collections");
  std::vector<std::string> bodies;
  for (uint64_t n = 0; n < o.writes; ++n) bodies.push_back(DocumentBody(n, o.payload_bytes));
  out << "  collections: " << Thousands(o.writes) << " writes of " << Thousands(o.ids)
      << " documents (" << o.payload_bytes << " bytes) by " << o.writers << " writers\n";
  std::vector<double> put_rates, publish_rates, ratios;
  for (int round = 0; round < o.rounds; ++round) {
    const std::string collection = absl::StrCat("docs-", round);
    KEEL_ASSIGN_OR_RETURN(
        double put_seconds, TimeWrites(o, [&](uint64_t n) {
          return collections->Put(collection, absl::StrCat("d", n % o.ids), bodies[n], {}).status();
        }));
    const std::string stream = absl::StrCat("plain-", round);
    KEEL_ASSIGN_OR_RETURN(double publish_seconds, TimeWrites(o, [&](uint64_t n) {
                            Event event;
                            event.stream = stream;
                            event.type = "doc.written";
                            event.content_type = "application/json";
                            event.payload = bodies[n];
                            return bus->Publish(std::move(event)).status();
                          }));
    const double writes = static_cast<double>(o.writes);
    put_rates.push_back(writes / put_seconds);
    publish_rates.push_back(writes / publish_seconds);
    ratios.push_back(publish_seconds / put_seconds);
    out << "  round " << round + 1 << ": Put " << Duration(put_seconds) << ", publish "
        << Duration(publish_seconds) << "\n"
        << std::flush;
  }
  KEEL_RETURN_IF_ERROR(bus->Close());
  return ResultRow{"Collection::Put vs plain publishes of the documents",
                   EventsPerSecond(Median(put_rates)),
                   EventsPerSecond(Median(publish_rates)),
                   Median(ratios),
                   "x",
                   ResultRow::Goal::kAtLeast,
                   0.7};
}

}  // namespace keel::bench
