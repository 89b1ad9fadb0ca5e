// `keel-bench storage`: the durable driver over LevelDB against raw LevelDB,
// measured in the same run on the same generated events (issue 3):
//
//   1. write:  raw WriteBatch of 1000 (sync=false) vs durable `sync=none`
//              with 4 publisher threads through EventBus::Publish.
//   2. sync:   raw synced WriteBatch of 100 vs durable `sync=always` with 64
//              publisher threads, and that against one synced publisher.
//   3. replay: Replayer::Replay in pages of 1000 over every stream vs a raw
//              LevelDB iteration over the same entry keys.
//   4. reopen: opening the durable bus (= recovery) over stores of 100k, 1M
//              and 10M events across 10k streams; must stay flat.
//
// Same keys and values: every event gets its id before publishing, and the
// bus runs on a fixed clock, so the durable driver writes byte for byte the
// entries (EntryKey/EntryValue) and head records (HeadKey/HeadValue) that
// the raw baselines write (heads by the driver's rule: with a stream's first
// events and at head checkpoints). The raw baselines get pre-encoded keys and values:
// they measure LevelDB alone. Figures are printed, never asserted.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <latch>
#include <ostream>
#include <random>
#include <set>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "keel/cmd/keel-bench/bench_mode.h"
#include "keel/cmd/keel-bench/bench_process.h"
#include "keel/cmd/keel-bench/bench_report.h"
#include "keel/cmd/keel-bench/raw_leveldb.h"
#include "keel/core/clock.h"
#include "keel/core/driver_factory.h"
#include "keel/core/publish_validation.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/durable/raw_layout.h"
#include "leveldb/iterator.h"
#include "leveldb/options.h"
#include "leveldb/write_batch.h"
#include "keel/statestore/leveldb/leveldb_store.h"

namespace keel::bench {
namespace {

namespace fs = std::filesystem;
using durable::raw::RawHead;

constexpr char kEventType[] = "bench.storage";
constexpr char kContentType[] = "application/octet-stream";

// ---------------------------------------------------------------- options

struct StorageOptions {
  uint64_t events = 1'000'000;
  uint64_t payload_bytes = 256;
  uint64_t streams = 64;
  uint64_t publishers = 4;
  uint64_t write_batch = 1000;
  uint64_t sync_events = 200'000;
  uint64_t sync_single_events = 5'000;
  uint64_t sync_publishers = 64;
  uint64_t sync_batch = 100;
  uint64_t sync_slices = 8;
  uint64_t replay_page = 1000;
  int rounds = 3;  // Alternating repetitions of the write and replay measurements.
  // Longest wait after a write run for the machine to go idle, counted in
  // the run's time (SettleMachine): each side pays its own compactions.
  absl::Duration settle = absl::Seconds(30);
  std::vector<uint64_t> reopen_events = {100'000, 1'000'000, 10'000'000};
  uint64_t reopen_streams = 10'000;
  uint64_t reopen_payload_bytes = 32;
  int reopen_reps = 3;
  bool reopen_compact = true;
  std::string dir;
  bool keep = false;
  bool quick = false;
  std::set<std::string> cases = {"write", "sync", "replay", "reopen", "extras"};
  uint64_t seed = 20261130;
};

// A value for `name`: the flag when given, else `quick` under --quick, else
// the default.
template <typename T>
T Pick(const po::variables_map& vars, const char* name, bool quick, T quick_value) {
  if (quick && (vars.count(name) == 0 || vars[name].defaulted())) return quick_value;
  return vars[name].as<T>();
}

absl::StatusOr<std::vector<uint64_t>> ParseCounts(const std::string& text) {
  std::vector<uint64_t> counts;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipEmpty())) {
    uint64_t n = 0;
    std::string digits;
    for (char c : part) {
      if (c != '_' && c != ' ') digits.push_back(c);
    }
    if (!absl::SimpleAtoi(digits, &n) || n == 0) {
      return absl::InvalidArgumentError(absl::StrCat("bad event count '", part, "'"));
    }
    counts.push_back(n);
  }
  if (counts.empty()) return absl::InvalidArgumentError("no event counts given");
  std::sort(counts.begin(), counts.end());
  return counts;
}

absl::StatusOr<StorageOptions> OptionsFrom(const po::variables_map& vars) {
  StorageOptions o;
  o.quick = vars.count("quick") > 0;
  const bool q = o.quick;
  o.events = Pick<uint64_t>(vars, "events", q, 20'000);
  o.payload_bytes = vars["payload-bytes"].as<uint64_t>();
  o.streams = vars["streams"].as<uint64_t>();
  o.publishers = vars["publishers"].as<uint64_t>();
  o.sync_events = Pick<uint64_t>(vars, "sync-events", q, 4'000);
  o.sync_single_events = Pick<uint64_t>(vars, "sync-single-events", q, 200);
  o.sync_publishers = vars["sync-publishers"].as<uint64_t>();
  o.sync_slices = Pick<uint64_t>(vars, "sync-slices", q, 2);
  o.rounds = Pick<int>(vars, "rounds", q, 1);
  // A smoke run shares the machine with other tests: it is never idle.
  o.settle = absl::Seconds(Pick<double>(vars, "settle-seconds", q, 1.0));
  KEEL_ASSIGN_OR_RETURN(
      o.reopen_events,
      ParseCounts(Pick<std::string>(vars, "reopen-events", q, "10000,50000")));
  o.reopen_streams = Pick<uint64_t>(vars, "reopen-streams", q, 1000);
  o.reopen_payload_bytes = vars["reopen-payload-bytes"].as<uint64_t>();
  o.reopen_reps = Pick<int>(vars, "reopen-reps", q, 1);
  o.reopen_compact = vars["reopen-compact"].as<bool>();
  o.keep = vars.count("keep") > 0;
  o.seed = vars["seed"].as<uint64_t>();
  if (vars.count("dir")) o.dir = vars["dir"].as<std::string>();
  o.cases.clear();
  for (absl::string_view c : absl::StrSplit(vars["cases"].as<std::string>(), ',',
                                            absl::SkipEmpty())) {
    if (c != "write" && c != "sync" && c != "replay" && c != "reopen" && c != "extras") {
      return absl::InvalidArgumentError(absl::StrCat(
          "--cases: unknown case '", c, "' (write, sync, replay, reopen, extras)"));
    }
    o.cases.insert(std::string(c));
  }
  if (o.events == 0 || o.streams == 0 || o.publishers == 0 || o.sync_publishers == 0 ||
      o.reopen_streams == 0 || o.rounds < 1 || o.reopen_reps < 1) {
    return absl::InvalidArgumentError("counts must be at least 1");
  }
  if (o.publishers > o.streams || o.sync_publishers > o.streams) {
    return absl::InvalidArgumentError(
        "--publishers and --sync-publishers must not exceed --streams (each publisher owns "
        "whole streams so that sequences are deterministic)");
  }
  if (o.payload_bytes > 100'000 || o.reopen_payload_bytes > 100'000) {
    return absl::InvalidArgumentError("payloads are limited to 100000 bytes");
  }
  o.sync_events = std::min(o.sync_events, o.events);
  o.sync_single_events = std::min(o.sync_single_events, o.events);
  return o;
}

// ---------------------------------------------------------------- helpers

// Publish times come from this clock, so entries are byte-identical to the
// raw baseline's.
class FixedClock final : public Clock {
 public:
  explicit FixedClock(absl::Time now) : now_(now) {}
  absl::Time Now() const override { return now_; }

 private:
  const absl::Time now_;
};

std::string StreamName(absl::string_view prefix, uint64_t index, int width) {
  return absl::StrFormat("%s%0*d", prefix, width, static_cast<int>(index));
}

void FillRandom(std::mt19937_64& rng, size_t bytes, std::string& out) {
  out.resize(bytes);
  for (size_t i = 0; i < bytes; i += 8) {
    uint64_t r = rng();
    for (size_t j = 0; j < 8 && i + j < bytes; ++j) out[i + j] = static_cast<char>(r >> (8 * j));
  }
}

// Flushes dirty pages so that one phase's write-back does not bleed into the
// next phase's timing.
void FlushFilesystem(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return;
  ::syncfs(fd);
  ::close(fd);
}

void RemoveTree(const std::string& path) {
  std::error_code ignored;
  fs::remove_all(path, ignored);
}

Config DurableConfig(const std::string& path, absl::string_view sync) {
  return Config{{"store", "leveldb"}, {"store.path", path}, {"sync", std::string(sync)}};
}

// ---------------------------------------------------------------- events

// The generated events of the write, sync and replay cases. Event i goes to
// stream i % streams and becomes that stream's sequence i / streams + 1.
struct EventSet {
  absl::Time time;
  std::vector<std::string> streams;
  std::vector<Event> events;         // Ready to publish (id and stream set).
  std::vector<std::string> keys;     // EntryKey of each event.
  std::vector<std::string> values;   // EntryValue of each event, as stored.
  std::vector<uint64_t> sizes;       // Event::ApproximateSize, for heads.
  std::vector<std::string> head_keys;  // HeadKey of each stream.
  uint64_t entry_bytes = 0;          // Sum of key and value sizes.

  uint64_t stream_of(size_t i) const { return i % streams.size(); }
  uint64_t sequence_of(size_t i) const { return i / streams.size() + 1; }
  // Entry bytes of the first `count` events.
  uint64_t BytesOf(size_t count) const {
    uint64_t bytes = 0;
    for (size_t i = 0; i < count; ++i) bytes += keys[i].size() + values[i].size();
    return bytes;
  }
};

EventSet GenerateEvents(const StorageOptions& o) {
  EventSet set;
  set.time = absl::FromUnixMicros(absl::ToUnixMicros(absl::Now()));
  for (uint64_t s = 0; s < o.streams; ++s) {
    set.streams.push_back(StreamName("bench-", s, 3));
    set.head_keys.push_back(durable::raw::HeadKey(set.streams.back()));
  }
  std::mt19937_64 rng(o.seed);
  set.events.resize(o.events);
  set.keys.resize(o.events);
  set.values.resize(o.events);
  set.sizes.resize(o.events);
  for (size_t i = 0; i < o.events; ++i) {
    Event& e = set.events[i];
    e.stream = set.streams[set.stream_of(i)];
    e.type = kEventType;
    e.content_type = kContentType;
    e.id = NewEventId(set.time);
    e.time = set.time;
    FillRandom(rng, o.payload_bytes, e.payload);
    set.keys[i] = durable::raw::EntryKey(e.stream, set.sequence_of(i));
    set.values[i] = durable::raw::EntryValue(e);
    set.sizes[i] = e.ApproximateSize();
    set.entry_bytes += set.keys[i].size() + set.values[i].size();
    e.time = absl::InfinitePast();  // The bus assigns it (from the fixed clock).
  }
  return set;
}

// ---------------------------------------------------------------- raw writes

// Writes events of `set` with raw LevelDB in batches of `batch_events`, with
// the head records the durable driver writes: a stream's head in the batch
// that starts the stream, and every lagging head at a head checkpoint
// (durable::raw::HeadCheckpointRule, at the driver's default interval of 1
// GiB, which the default sizes do not reach; the synced barrier the driver
// adds before a checkpoint without sync is not mirrored). Successive Write
// calls continue the streams.
class RawWriter {
 public:
  static absl::StatusOr<std::unique_ptr<RawWriter>> Open(const std::string& path,
                                                         const EventSet& set) {
    KEEL_ASSIGN_OR_RETURN(std::unique_ptr<RawLevelDb> raw, RawLevelDb::Open(path));
    return std::unique_ptr<RawWriter>(new RawWriter(path, set, std::move(raw)));
  }

  // Writes events [begin, end); returns seconds.
  absl::StatusOr<double> Write(size_t begin, size_t end, size_t batch_events, bool sync) {
    leveldb::WriteOptions write_options;
    write_options.sync = sync;
    Stopwatch watch;
    for (size_t first = begin; first < end; first += batch_events) {
      const size_t last = std::min(end, first + batch_events);
      batch_.Clear();
      uint64_t batch_bytes = 0;
      for (size_t i = first; i < last; ++i) {
        const size_t s = set_.stream_of(i);
        RawHead& head = heads_[s];
        if (!touched_[s]) {
          touched_[s] = head.started() ? kTouched : kStarts;
          touched_list_.push_back(s);
        }
        if (head.count() == 0) head.oldest_time = set_.time;
        head.next = set_.sequence_of(i) + 1;
        head.bytes += set_.sizes[i];
        batch_.Put(set_.keys[i], set_.values[i]);
        batch_bytes += set_.keys[i].size() + set_.values[i].size();
      }
      const bool checkpoint = checkpoints_.Due(batch_bytes);
      if (checkpoint) {
        for (size_t s = 0; s < set_.streams.size(); ++s) {
          if (!touched_[s] && checkpoints_.Lagging(set_.streams[s])) {
            batch_.Put(set_.head_keys[s], durable::raw::HeadValue(heads_[s]));
          }
        }
      }
      std::vector<absl::string_view> unwritten;
      for (size_t s : touched_list_) {
        if (checkpoint || touched_[s] == kStarts) {
          batch_.Put(set_.head_keys[s], durable::raw::HeadValue(heads_[s]));
        } else {
          unwritten.push_back(set_.streams[s]);
        }
        touched_[s] = 0;
      }
      touched_list_.clear();
      KEEL_RETURN_IF_ERROR(FromLevelDbStatus(raw_->db().Write(write_options, &batch_), path_));
      checkpoints_.Committed(checkpoint, unwritten, batch_bytes);
    }
    return watch.Seconds();
  }

 private:
  RawWriter(std::string path, const EventSet& set, std::unique_ptr<RawLevelDb> raw)
      : path_(std::move(path)),
        set_(set),
        raw_(std::move(raw)),
        heads_(set.streams.size()),
        touched_(set.streams.size(), 0) {}

  // touched_ values: in this batch, and whether the batch starts the stream.
  static constexpr char kTouched = 1;
  static constexpr char kStarts = 2;

  const std::string path_;
  const EventSet& set_;
  const std::unique_ptr<RawLevelDb> raw_;
  std::vector<RawHead> heads_;
  std::vector<char> touched_;
  std::vector<size_t> touched_list_;
  durable::raw::HeadCheckpointRule checkpoints_;
  leveldb::WriteBatch batch_;
};

// Writes the first `count` events into a fresh raw store; returns seconds,
// settling (up to `settle`) included.
absl::StatusOr<double> RawWrite(const std::string& path, const EventSet& set, size_t count,
                                size_t batch_events, bool sync, absl::Duration settle) {
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<RawWriter> writer, RawWriter::Open(path, set));
  KEEL_ASSIGN_OR_RETURN(const double seconds, writer->Write(0, count, batch_events, sync));
  return seconds + SettleMachine(settle).seconds;
}

// ---------------------------------------------------------------- publishes

// Publishes events [begin, end) of `set` from `publishers` threads; publisher
// p owns the streams s with s % publishers == p. With `batch` == 1 each event
// goes through EventBus::Publish, in generation order; otherwise through
// PublishBatch in runs of `batch` events of one stream, taking the
// publisher's streams in turn. Checks every receipt's sequence (so the bus
// must hold exactly the events before `begin`). Returns seconds from the
// moment all threads are released.
absl::StatusOr<double> PublishConcurrently(EventBus& bus, const EventSet& set, size_t begin,
                                           size_t end, size_t publishers, size_t batch) {
  struct Work {
    std::vector<Event> events;      // In publishing order.
    std::vector<uint64_t> expected; // Sequence of each event.
    std::vector<size_t> runs;       // Events per Publish/PublishBatch call.
  };
  std::vector<Work> work(publishers);
  const size_t streams = set.streams.size();
  for (size_t p = 0; p < publishers; ++p) {
    Work& w = work[p];
    // Event indices of each owned stream, in sequence order.
    std::vector<std::vector<size_t>> owned;
    for (size_t s = p; s < streams; s += publishers) {
      owned.emplace_back();
      size_t i = s;
      if (i < begin) i += (begin - i + streams - 1) / streams * streams;
      for (; i < end; i += streams) owned.back().push_back(i);
    }
    for (size_t offset = 0;; offset += batch) {
      bool any = false;
      for (const std::vector<size_t>& indices : owned) {
        if (offset >= indices.size()) continue;
        any = true;
        const size_t stop = std::min(indices.size(), offset + batch);
        for (size_t k = offset; k < stop; ++k) {
          w.events.push_back(set.events[indices[k]]);  // Copied before the clock starts.
          w.expected.push_back(set.sequence_of(indices[k]));
        }
        w.runs.push_back(stop - offset);
      }
      if (!any) break;
    }
  }
  absl::Mutex mu;
  absl::Status first_error;
  std::latch ready(static_cast<std::ptrdiff_t>(publishers) + 1);
  std::vector<std::thread> threads;
  for (size_t p = 0; p < publishers; ++p) {
    threads.emplace_back([&, p] {
      Work& w = work[p];
      ready.arrive_and_wait();
      size_t next = 0;
      for (size_t run : w.runs) {
        absl::Status status;
        std::vector<uint64_t> sequences;
        if (batch == 1) {
          absl::StatusOr<Receipt> receipt = bus.Publish(std::move(w.events[next]));
          status = receipt.status();
          if (status.ok()) sequences.push_back(receipt->sequence);
        } else {
          std::vector<Event> events(std::make_move_iterator(w.events.begin() + next),
                                    std::make_move_iterator(w.events.begin() + next + run));
          const std::string stream = events.front().stream;
          absl::StatusOr<std::vector<Receipt>> receipts =
              bus.PublishBatch(stream, std::move(events));
          status = receipts.status();
          if (status.ok()) {
            for (const Receipt& r : *receipts) sequences.push_back(r.sequence);
          }
        }
        for (size_t k = 0; status.ok() && k < run; ++k) {
          if (k >= sequences.size() || sequences[k] != w.expected[next + k]) {
            status = absl::InternalError(absl::StrCat(
                "publish got sequence ", k < sequences.size() ? sequences[k] : 0,
                "; expected ", w.expected[next + k]));
          }
        }
        if (!status.ok()) {
          absl::MutexLock lock(&mu);
          first_error.Update(status);
          return;
        }
        next += run;
      }
    });
  }
  ready.arrive_and_wait();
  Stopwatch watch;
  for (std::thread& t : threads) t.join();
  const double seconds = watch.Seconds();
  KEEL_RETURN_IF_ERROR(first_error);
  return seconds;
}

// A durable bus over LevelDB on a fixed clock (so that its entries are
// byte-identical to the raw baselines').
struct DurableSession {
  std::unique_ptr<FixedClock> clock;
  std::unique_ptr<EventBus> bus;

  static absl::StatusOr<DurableSession> Open(const std::string& path, absl::string_view sync,
                                             absl::Time time) {
    DurableSession session;
    session.clock = std::make_unique<FixedClock>(time);
    DriverContext context;
    context.clock = session.clock.get();
    KEEL_ASSIGN_OR_RETURN(session.bus, CreateBus("durable", DurableConfig(path, sync), context));
    return session;
  }
};

// Opens a durable bus at `path` with `sync`, publishes the first `count`
// events, settles (up to `settle`), closes (untimed); returns seconds,
// settling included.
absl::StatusOr<double> DurablePublish(const std::string& path, absl::string_view sync,
                                      const EventSet& set, size_t count, size_t publishers,
                                      absl::Duration settle, size_t batch = 1) {
  KEEL_ASSIGN_OR_RETURN(DurableSession session, DurableSession::Open(path, sync, set.time));
  absl::StatusOr<double> seconds =
      PublishConcurrently(*session.bus, set, 0, count, publishers, batch);
  if (seconds.ok()) *seconds += SettleMachine(settle).seconds;
  absl::Status closed = session.bus->Close();
  KEEL_RETURN_IF_ERROR(seconds.status());
  KEEL_RETURN_IF_ERROR(closed);
  return seconds;
}

// ---------------------------------------------------------------- reads

struct ReadResult {
  double seconds = 0;
  uint64_t events = 0;
  uint64_t bytes = 0;  // Key and value bytes read (raw iterations only).
};

// Replays every stream from earliest in pages of `page` events.
absl::StatusOr<ReadResult> ReplayAll(const std::string& path, const EventSet& set,
                                     size_t page_limit) {
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<EventBus> bus,
                        CreateBus("durable", DurableConfig(path, "none")));
  Replayer* replayer = bus->replayer();
  ReadResult result;
  Stopwatch watch;
  for (const std::string& stream : set.streams) {
    ReplayRequest request;
    request.stream = stream;
    request.limit = page_limit;
    request.after = Position::Earliest();
    while (true) {
      KEEL_ASSIGN_OR_RETURN(ReplayPage page, replayer->Replay(request));
      result.events += page.events.size();
      if (page.reached_end) break;
      request.after = Position::After(page.next);
    }
  }
  result.seconds = watch.Seconds();
  KEEL_RETURN_IF_ERROR(bus->Close());
  return result;
}

// Follows every stream from earliest (catch-up from the store in pages of
// `page`) until it has read the whole stream.
absl::StatusOr<ReadResult> FollowAll(const std::string& path, const EventSet& set,
                                     size_t count, size_t page_limit) {
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<EventBus> bus,
                        CreateBus("durable", DurableConfig(path, "none")));
  ReadResult result;
  Stopwatch watch;
  for (size_t s = 0; s < set.streams.size(); ++s) {
    const uint64_t want = count / set.streams.size() + (s < count % set.streams.size() ? 1 : 0);
    SubscribeOptions options;
    options.stream = set.streams[s];
    options.after = Position::Earliest();
    options.catch_up_page = page_limit;
    options.queue_capacity = page_limit;
    KEEL_ASSIGN_OR_RETURN(std::unique_ptr<Subscription> sub, bus->Subscribe(options));
    uint64_t got = 0;
    while (got < want) {
      KEEL_ASSIGN_OR_RETURN(std::vector<EventPtr> events, sub->Next(page_limit, absl::Seconds(30)));
      if (events.empty()) {
        return absl::DeadlineExceededError(absl::StrCat("follow of '", set.streams[s],
                                                        "' stalled at ", got, " of ", want));
      }
      for (const EventPtr& e : events) got += e->sequence != 0 ? 1 : 0;
    }
    sub->Cancel();
    result.events += got;
  }
  result.seconds = watch.Seconds();
  KEEL_RETURN_IF_ERROR(bus->Close());
  return result;
}

// Iterates every entry key of the store at `path` with raw LevelDB: the
// cheapest scan (no checksums, no cache fill), or with the ReadOptions
// LevelDbStore's iterators use (checksums verified, no cache fill).
absl::StatusOr<ReadResult> RawIterate(const std::string& path, bool store_read_options) {
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<RawLevelDb> raw, RawLevelDb::Open(path));
  leveldb::ReadOptions options;
  // A scan does not fill the block cache (LevelDB's own advice for bulk
  // reads; filling it made the raw scan slower in some runs). The baseline
  // skips block checksums; the store verifies them.
  options.fill_cache = false;
  options.verify_checksums = store_read_options;
  const std::string prefix = durable::raw::EntryKeyPrefix();
  ReadResult result;
  Stopwatch watch;
  std::unique_ptr<leveldb::Iterator> it(raw->db().NewIterator(options));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    result.bytes += it->key().size() + it->value().size();
    ++result.events;
  }
  result.seconds = watch.Seconds();
  KEEL_RETURN_IF_ERROR(FromLevelDbStatus(it->status(), path));
  return result;
}

// ---------------------------------------------------------------- reopen

struct ReopenResult {
  uint64_t events = 0;
  double generate_seconds = 0;
  double compact_seconds = 0;
  double leveldb_open = 0;  // Median seconds of a raw LevelDB open.
  double durable_open = 0;  // Median seconds of CreateBus("durable") (= recovery).
  uint64_t disk_bytes = 0;
};

uint64_t DirectoryBytes(const std::string& path) {
  uint64_t bytes = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    if (entry.is_regular_file(ec)) bytes += entry.file_size(ec);
  }
  return bytes;
}

// Builds a store of `events` events across `streams` streams in the durable
// layout with raw LevelDB: the meta record comes from a first open of the
// driver; entries and heads are exactly what the driver writes (round-robin
// over streams, batches of 1000 events plus the heads they touched).
absl::StatusOr<ReopenResult> GenerateReopenStore(const std::string& path, uint64_t events,
                                                 uint64_t streams, uint64_t payload_bytes,
                                                 bool compact, uint64_t seed) {
  ReopenResult result;
  result.events = events;
  {
    KEEL_ASSIGN_OR_RETURN(std::unique_ptr<EventBus> bus,
                          CreateBus("durable", DurableConfig(path, "always")));
    KEEL_RETURN_IF_ERROR(bus->Close());  // The meta record (epoch) is written.
  }
  const absl::Time time = absl::FromUnixMicros(absl::ToUnixMicros(absl::Now()));
  std::vector<std::string> names;
  std::vector<std::string> head_keys;
  for (uint64_t s = 0; s < streams; ++s) {
    names.push_back(StreamName("r-", s, 5));
    head_keys.push_back(durable::raw::HeadKey(names.back()));
  }
  std::vector<RawHead> heads(streams);
  std::vector<char> touched(streams, 0);
  std::vector<size_t> touched_list;
  std::mt19937_64 rng(seed);
  Stopwatch watch;
  KEEL_ASSIGN_OR_RETURN(std::unique_ptr<RawLevelDb> raw, RawLevelDb::Open(path));
  leveldb::WriteBatch batch;
  Event e;
  e.type = kEventType;
  e.content_type = kContentType;
  e.time = time;
  for (uint64_t begin = 0; begin < events; begin += 1000) {
    const uint64_t end = std::min(events, begin + 1000);
    batch.Clear();
    for (uint64_t i = begin; i < end; ++i) {
      const size_t s = i % streams;
      const uint64_t seq = i / streams + 1;
      e.stream = names[s];
      e.id = NewEventId(time);
      FillRandom(rng, payload_bytes, e.payload);
      RawHead& head = heads[s];
      if (head.count() == 0) head.oldest_time = time;
      head.next = seq + 1;
      head.bytes += e.ApproximateSize();
      batch.Put(durable::raw::EntryKey(names[s], seq), durable::raw::EntryValue(e));
      if (!touched[s]) {
        touched[s] = 1;
        touched_list.push_back(s);
      }
    }
    for (size_t s : touched_list) {
      batch.Put(head_keys[s], durable::raw::HeadValue(heads[s]));
      touched[s] = 0;
    }
    touched_list.clear();
    KEEL_RETURN_IF_ERROR(FromLevelDbStatus(raw->db().Write(leveldb::WriteOptions(), &batch), path));
  }
  result.generate_seconds = watch.Seconds();
  if (compact) {
    watch.Restart();
    raw->db().CompactRange(nullptr, nullptr);
    result.compact_seconds = watch.Seconds();
  }
  raw.reset();
  // One untimed open and close, so that no write-ahead log is left to replay
  // and the timed opens below all see the same settled files.
  KEEL_RETURN_IF_ERROR(RawLevelDb::Open(path).status());
  return result;
}

absl::Status MeasureReopen(const std::string& path, uint64_t streams, int reps,
                           ReopenResult& result) {
  std::vector<double> leveldb_opens;
  std::vector<double> durable_opens;
  const uint64_t first_stream_events = result.events / streams + (result.events % streams ? 1 : 0);
  for (int r = 0; r < reps; ++r) {
    {
      Stopwatch watch;
      KEEL_ASSIGN_OR_RETURN(std::unique_ptr<RawLevelDb> raw, RawLevelDb::Open(path));
      leveldb_opens.push_back(watch.Seconds());
    }
    Stopwatch watch;
    KEEL_ASSIGN_OR_RETURN(std::unique_ptr<EventBus> bus,
                          CreateBus("durable", DurableConfig(path, "none")));
    durable_opens.push_back(watch.Seconds());
    // The recovered state must be the generated one.
    KEEL_ASSIGN_OR_RETURN(std::vector<StreamInfo> infos,
                          bus->replayer()->ListStreams("r-", streams + 1));
    KEEL_ASSIGN_OR_RETURN(StreamInfo first, bus->replayer()->Bounds(StreamName("r-", 0, 5)));
    KEEL_RETURN_IF_ERROR(bus->Close());
    const uint64_t expected_streams = std::min(streams, result.events);
    if (infos.size() != expected_streams || first.last_sequence != first_stream_events) {
      return absl::InternalError(absl::StrCat(
          "recovered state differs from the generated store: ", infos.size(), " streams (want ",
          expected_streams, "), stream r-00000 at ", first.last_sequence, " (want ",
          first_stream_events, ")"));
    }
  }
  result.leveldb_open = Median(leveldb_opens);
  result.durable_open = Median(durable_opens);
  result.disk_bytes = DirectoryBytes(path);
  return absl::OkStatus();
}

// Rough bytes a reopen store of `events` needs while it is built: entries
// plus head versions, uncompressed, with room for compaction.
uint64_t EstimateReopenBytes(uint64_t events, uint64_t payload_bytes) {
  const uint64_t entry = 16 + 12 + 4 + 40 + 16 + 12 + 28 + payload_bytes;  // key + envelope
  const uint64_t head = 8 + 37 + 16;
  return events * (entry + head) * 2;
}

// ---------------------------------------------------------------- the mode

class StorageBench final : public BenchMode {
 public:
  absl::string_view name() const override { return "storage"; }
  absl::string_view summary() const override {
    return "durable driver over LevelDB vs raw LevelDB: write, sync, replay, reopen";
  }
  void AddOptions(po::options_description& options) const override {
    options.add_options()
        ("events", po::value<uint64_t>()->default_value(1'000'000),
         "events for the write and replay cases (--quick: 20000)")
        ("payload-bytes", po::value<uint64_t>()->default_value(256), "random payload per event")
        ("streams", po::value<uint64_t>()->default_value(64),
         "streams the write/sync/replay events are spread over (round robin)")
        ("publishers", po::value<uint64_t>()->default_value(4),
         "publisher threads of the sync=none write case")
        ("sync-events", po::value<uint64_t>()->default_value(200'000),
         "events of the synced raw and 64-publisher cases (--quick: 4000)")
        ("sync-single-events", po::value<uint64_t>()->default_value(5'000),
         "events of the single synced publisher (--quick: 200)")
        ("sync-publishers", po::value<uint64_t>()->default_value(64),
         "publisher threads of the sync=always case")
        ("sync-slices", po::value<uint64_t>()->default_value(8),
         "the sync case runs its variants in this many interleaved slices and reports "
         "median slice rates and ratios (--quick: 2)")
        ("settle-seconds", po::value<double>()->default_value(30.0),
         "longest wait after each write run for the machine to go idle, counted in the run's "
         "time (0: none; --quick: 1)")
        ("rounds", po::value<int>()->default_value(3),
         "rounds of the write and replay cases; baseline and keel alternate, the table "
         "shows median rates and the median of the per-round ratios (--quick: 1)")
        ("reopen-events", po::value<std::string>()->default_value("100000,1000000,10000000"),
         "comma-separated store sizes of the reopen case (--quick: 10000,50000)")
        ("reopen-streams", po::value<uint64_t>()->default_value(10'000),
         "streams of the reopen stores (--quick: 1000)")
        ("reopen-payload-bytes", po::value<uint64_t>()->default_value(32),
         "payload per event of the reopen stores (smaller than --payload-bytes so 10M fits)")
        ("reopen-reps", po::value<int>()->default_value(3),
         "timed opens per reopen store; the median is reported (--quick: 1)")
        ("reopen-compact", po::value<bool>()->default_value(true),
         "fully compact each reopen store after generating it (a settled store)")
        ("cases", po::value<std::string>()->default_value("write,sync,replay,reopen,extras"),
         "comma-separated cases to run; `extras` adds diagnostic rows without targets (1 "
         "publisher and PublishBatch for write, a raw synced batch as large as the publisher "
         "count for sync, Follow and checked raw reads for replay)")
        ("dir", po::value<std::string>(),
         "parent directory for the stores (default: the system temp dir); a fresh "
         "keel-bench-* directory is made inside and removed afterwards")
        ("keep", "keep the stores instead of removing them")
        ("seed", po::value<uint64_t>()->default_value(20261130), "payload random seed")
        ("quick", "a small smoke run for CI (20k events, no 10M store); figures are not "
                  "meaningful");
  }

  int Run(const po::variables_map& vars, BenchIo& io) const override {
    absl::StatusOr<StorageOptions> options = OptionsFrom(vars);
    if (!options.ok()) {
      io.err << "keel-bench storage: " << options.status().message() << "\n";
      return kExitUsage;
    }
    absl::Status status = RunAll(*options, io.out);
    if (!status.ok()) {
      io.err << "keel-bench storage: " << status << "\n";
      return kExitFailure;
    }
    return kExitOk;
  }

 private:
  absl::Status RunAll(const StorageOptions& o, std::ostream& out) const;
};

absl::Status StorageBench::RunAll(const StorageOptions& o, std::ostream& out) const {
  std::error_code ec;
  const fs::path parent = o.dir.empty() ? fs::temp_directory_path() : fs::path(o.dir);
  fs::create_directories(parent, ec);
  std::string root_template = (parent / "keel-bench-XXXXXX").string();
  if (::mkdtemp(root_template.data()) == nullptr) {
    return absl::UnavailableError(absl::StrCat("cannot create a directory in ", parent.string()));
  }
  const std::string root = root_template;
  struct Cleanup {
    std::string root;
    bool keep;
    ~Cleanup() {
      if (!keep) RemoveTree(root);
    }
  } cleanup{root, o.keep};
  auto sub = [&](absl::string_view name) { return (fs::path(root) / std::string(name)).string(); };
  const fs::space_info space = fs::space(root, ec);

  out << "keel-bench storage" << (o.quick ? " --quick (smoke run: figures are not meaningful)" : "")
      << "\n"
      << "  events: " << Thousands(o.events) << " x " << o.payload_bytes
      << "-byte random payloads over " << o.streams << " streams; stores under " << root << " ("
      << Bytes(space.available) << " free)\n"
      << "  machine: " << std::thread::hardware_concurrency()
      << " CPUs; LevelDB options as the leveldb store's defaults ("
      << Bytes(LevelDbStore::kDefaultWriteBufferBytes) << " write buffer, "
      << Bytes(LevelDbStore::kDefaultBlockCacheBytes) << " block cache, bloom 10, snappy)\n"
      << "  raw baselines write pre-encoded, byte-identical keys and values (entries, and "
         "heads by the driver's rule: a stream's first batch and head checkpoints); keel "
         "publishes through EventBus::Publish\n\n";

  ResultTable table;
  // The write, sync and replay cases share one generated event set.
  EventSet set;
  if (o.cases.count("write") || o.cases.count("sync") || o.cases.count("replay")) {
    out << "generating events ... " << std::flush;
    Stopwatch gen_watch;
    set = GenerateEvents(o);
    out << Duration(gen_watch.Seconds()) << " (" << Bytes(set.entry_bytes)
        << " of entry keys and values)\n" << std::flush;
  }

  auto label = [](const std::string& text) { return absl::StrFormat("  %-30s", text); };
  // Rate and ratio rows from per-round (or per-slice) times: the figures are
  // the medians of the rounds' rates, the ratio is the median of the rounds'
  // ratios (each measured back to back, so drift on this shared machine
  // affects both sides of a ratio alike).
  auto rates = [](double events, const std::vector<double>& seconds) {
    std::vector<double> r;
    for (double s : seconds) r.push_back(events / s);
    return r;
  };
  auto median_ratio = [](const std::vector<double>& a, const std::vector<double>& b) {
    std::vector<double> r;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) r.push_back(a[i] / b[i]);
    return Median(r);
  };

  // 1. write, sync=none.
  bool have_replay_store = false;
  const bool extras = o.cases.count("extras") > 0;
  if (o.cases.count("write") || o.cases.count("replay")) {
    out << "\n[1] write: raw WriteBatch of " << o.write_batch << " (sync=false) vs durable "
        << "sync=none, " << o.publishers << " publishers, " << Thousands(o.events)
        << " events per run; " << o.rounds << " rounds, fresh stores each; each run's time "
        << "includes settling (until the machine is idle: its flushes and compactions done)\n"
        << std::flush;
    std::vector<double> raw_s, keel_s, one_s, batch_s, raw_one_s;
    // Without the write case only the replay store is needed: one round.
    const int write_rounds = o.cases.count("write") ? o.rounds : 1;
    for (int round = 0; round < write_rounds; ++round) {
      if (o.cases.count("write")) {
        KEEL_ASSIGN_OR_RETURN(double seconds,
                              RawWrite(sub("raw-write"), set, o.events, o.write_batch, false,
                                       o.settle));
        RemoveTree(sub("raw-write"));
        FlushFilesystem(root);
        raw_s.push_back(seconds);
        out << label("raw leveldb") << Duration(seconds) << "\n" << std::flush;
      }
      // The last round's store stays for the replay case.
      RemoveTree(sub("keel-write"));
      KEEL_ASSIGN_OR_RETURN(double seconds, DurablePublish(sub("keel-write"), "none", set,
                                                           o.events, o.publishers, o.settle));
      have_replay_store = true;
      FlushFilesystem(root);
      keel_s.push_back(seconds);
      out << label(absl::StrCat("keel, ", o.publishers, " publishers")) << Duration(seconds)
          << "\n" << std::flush;
      if (o.cases.count("write") && extras) {
        // Diagnostics: the same events from one thread, and through
        // PublishBatch (runs of 100 events of one stream).
        KEEL_ASSIGN_OR_RETURN(seconds, DurablePublish(sub("keel-write-1"), "none", set,
                                                      o.events, 1, o.settle));
        RemoveTree(sub("keel-write-1"));
        FlushFilesystem(root);
        one_s.push_back(seconds);
        out << label("keel, 1 publisher") << Duration(seconds) << "\n" << std::flush;
        KEEL_ASSIGN_OR_RETURN(seconds, DurablePublish(sub("keel-write-b"), "none", set,
                                                      o.events, o.publishers, o.settle, 100));
        RemoveTree(sub("keel-write-b"));
        FlushFilesystem(root);
        batch_s.push_back(seconds);
        out << label(absl::StrCat("keel, ", o.publishers, " x PublishBatch(100)"))
            << Duration(seconds) << "\n" << std::flush;
        // The ceiling of one writer that cannot batch: a LevelDB write per
        // event, from one thread, the same records.
        KEEL_ASSIGN_OR_RETURN(seconds,
                              RawWrite(sub("raw-write-1"), set, o.events, 1, false, o.settle));
        RemoveTree(sub("raw-write-1"));
        FlushFilesystem(root);
        raw_one_s.push_back(seconds);
        out << label("raw leveldb, a write per event") << Duration(seconds) << "\n" << std::flush;
      }
    }
    if (o.cases.count("write")) {
      const std::vector<double> raw_rates = rates(o.events, raw_s);
      const double raw_rate = Median(raw_rates);
      const double bytes_per_event = double(set.entry_bytes) / o.events;
      const std::string raw_text =
          absl::StrCat("raw batch ", o.write_batch, ": ", EventsPerSecond(raw_rate), " ",
                       MiBPerSecond(raw_rate * bytes_per_event));
      auto row = [&](std::string text, const std::vector<double>& seconds,
                     ResultRow::Goal goal) {
        const std::vector<double> r = rates(o.events, seconds);
        const double rate = Median(r);
        table.Add(ResultRow{std::move(text),
                            absl::StrCat(EventsPerSecond(rate), " ",
                                         MiBPerSecond(rate * bytes_per_event)),
                            raw_text, median_ratio(r, raw_rates), "", goal, 0.7});
      };
      row(absl::StrCat("1 publish sync=none, ", o.publishers, " publishers"), keel_s,
          ResultRow::Goal::kAtLeast);
      if (extras) {
        row("1 publish sync=none, 1 publisher", one_s, ResultRow::Goal::kNone);
        row(absl::StrCat("1 PublishBatch(100) sync=none, ", o.publishers, " publ."), batch_s,
            ResultRow::Goal::kNone);
        const std::vector<double> one_rates = rates(o.events, one_s);
        const std::vector<double> raw_one_rates = rates(o.events, raw_one_s);
        table.Add(ResultRow{"1 publish sync=none, 1 publisher",
                            EventsPerSecond(Median(one_rates)),
                            absl::StrCat("raw write per event: ",
                                         EventsPerSecond(Median(raw_one_rates))),
                            median_ratio(one_rates, raw_one_rates), "", ResultRow::Goal::kNone,
                            0});
      }
    }
  }

  // 2. sync=always: every variant writes into its own store, all open at
  // once, in interleaved slices, so that the disk's drift (it is shared)
  // hits all variants of a slice alike.
  if (o.cases.count("sync")) {
    const bool same_batch = extras && o.sync_publishers != o.sync_batch;
    const size_t slices = std::max<size_t>(1, std::min<size_t>(o.sync_slices, o.sync_single_events));
    out << "\n[2] sync: raw synced WriteBatch of " << o.sync_batch << " vs durable sync=always; "
        << Thousands(o.sync_events) << " events for raw and " << o.sync_publishers
        << " publishers, " << Thousands(o.sync_single_events)
        << " for the single publisher (fsync-bound, so smaller), in " << slices
        << " interleaved slices\n" << std::flush;
    KEEL_ASSIGN_OR_RETURN(std::unique_ptr<RawWriter> raw, RawWriter::Open(sub("raw-sync"), set));
    std::unique_ptr<RawWriter> raw_same;
    if (same_batch) {
      KEEL_ASSIGN_OR_RETURN(raw_same, RawWriter::Open(sub("raw-sync-same"), set));
    }
    KEEL_ASSIGN_OR_RETURN(DurableSession many,
                          DurableSession::Open(sub("keel-sync-many"), "always", set.time));
    KEEL_ASSIGN_OR_RETURN(DurableSession one,
                          DurableSession::Open(sub("keel-sync-one"), "always", set.time));
    std::vector<double> raw_s, same_s, many_s, one_s, slice_events, slice_single;
    for (size_t k = 0; k < slices; ++k) {
      const size_t begin = o.sync_events * k / slices, end = o.sync_events * (k + 1) / slices;
      const size_t begin1 = o.sync_single_events * k / slices;
      const size_t end1 = o.sync_single_events * (k + 1) / slices;
      slice_events.push_back(end - begin);
      slice_single.push_back(end1 - begin1);
      KEEL_ASSIGN_OR_RETURN(double r, raw->Write(begin, end, o.sync_batch, true));
      raw_s.push_back(r);
      KEEL_ASSIGN_OR_RETURN(double m, PublishConcurrently(*many.bus, set, begin, end,
                                                          o.sync_publishers, 1));
      many_s.push_back(m);
      double same = 0;
      if (same_batch) {
        KEEL_ASSIGN_OR_RETURN(same, raw_same->Write(begin, end, o.sync_publishers, true));
        same_s.push_back(same);
      }
      KEEL_ASSIGN_OR_RETURN(double one_seconds,
                            PublishConcurrently(*one.bus, set, begin1, end1, 1, 1));
      one_s.push_back(one_seconds);
      out << "  slice " << k + 1 << ": raw batch " << o.sync_batch << " "
          << EventsPerSecond((end - begin) / r) << ", keel " << o.sync_publishers << " publ. "
          << EventsPerSecond((end - begin) / m);
      if (same_batch) {
        out << ", raw batch " << o.sync_publishers << " " << EventsPerSecond((end - begin) / same);
      }
      out << ", keel 1 publ. " << EventsPerSecond((end1 - begin1) / one_seconds) << "\n"
          << std::flush;
    }
    KEEL_RETURN_IF_ERROR(many.bus->Close());
    KEEL_RETURN_IF_ERROR(one.bus->Close());
    raw.reset();
    raw_same.reset();
    for (const char* dir : {"raw-sync", "raw-sync-same", "keel-sync-many", "keel-sync-one"}) {
      RemoveTree(sub(dir));
    }
    FlushFilesystem(root);
    auto slice_rates = [](const std::vector<double>& events, const std::vector<double>& seconds) {
      std::vector<double> r;
      for (size_t i = 0; i < seconds.size(); ++i) r.push_back(events[i] / seconds[i]);
      return r;
    };
    const double bytes_per_event = double(set.BytesOf(o.sync_events)) / o.sync_events;
    const std::vector<double> raw_rates = slice_rates(slice_events, raw_s);
    const std::vector<double> many_rates = slice_rates(slice_events, many_s);
    const std::vector<double> one_rates = slice_rates(slice_single, one_s);
    const double many_rate = Median(many_rates);
    const std::string many_text =
        absl::StrCat(EventsPerSecond(many_rate), " ", MiBPerSecond(many_rate * bytes_per_event));
    table.Add(ResultRow{
        absl::StrCat("2 publish sync=always, ", o.sync_publishers, " publishers"), many_text,
        absl::StrCat("raw synced batch ", o.sync_batch, ": ",
                     EventsPerSecond(Median(raw_rates)), " ",
                     MiBPerSecond(Median(raw_rates) * bytes_per_event)),
        median_ratio(many_rates, raw_rates), "", ResultRow::Goal::kAtLeast, 0.8});
    if (same_batch) {
      const std::vector<double> same_rates = slice_rates(slice_events, same_s);
      table.Add(ResultRow{
          absl::StrCat("2 publish sync=always, ", o.sync_publishers, " publishers"), many_text,
          absl::StrCat("raw synced batch ", o.sync_publishers, ": ",
                       EventsPerSecond(Median(same_rates)), " ",
                       MiBPerSecond(Median(same_rates) * bytes_per_event)),
          median_ratio(many_rates, same_rates), "", ResultRow::Goal::kNone, 0});
    }
    table.Add(ResultRow{
        absl::StrCat("2 sync=always gain, ", o.sync_publishers, " vs 1 publisher"),
        EventsPerSecond(many_rate),
        absl::StrCat("1 publisher: ", EventsPerSecond(Median(one_rates))),
        median_ratio(many_rates, one_rates), "x", ResultRow::Goal::kAtLeast, 50});
  }

  // 3. replay.
  if (o.cases.count("replay")) {
    if (!have_replay_store) return absl::InternalError("replay needs the write store");
    out << "\n[3] replay: " << Thousands(o.events) << " events of the write case, every stream "
        << "from earliest; " << o.rounds << " alternating rounds\n";
    std::vector<double> raw_s, checked_s, replay_s, follow_s;
    for (int round = 0; round < o.rounds; ++round) {
      std::vector<ReadResult> results;
      KEEL_ASSIGN_OR_RETURN(ReadResult r1, RawIterate(sub("keel-write"), false));
      KEEL_ASSIGN_OR_RETURN(ReadResult r3, ReplayAll(sub("keel-write"), set, o.replay_page));
      raw_s.push_back(r1.seconds);
      replay_s.push_back(r3.seconds);
      results = {r1, r3};
      out << "  round " << round + 1 << ": raw iterator " << Duration(r1.seconds) << ", Replay "
          << Duration(r3.seconds);
      if (extras) {
        KEEL_ASSIGN_OR_RETURN(ReadResult r2, RawIterate(sub("keel-write"), true));
        KEEL_ASSIGN_OR_RETURN(ReadResult r4,
                              FollowAll(sub("keel-write"), set, o.events, o.replay_page));
        checked_s.push_back(r2.seconds);
        follow_s.push_back(r4.seconds);
        results.push_back(r2);
        results.push_back(r4);
        out << ", raw checked " << Duration(r2.seconds) << ", Follow " << Duration(r4.seconds);
      }
      out << "\n" << std::flush;
      for (const ReadResult& r : results) {
        if (r.events != o.events) {
          return absl::InternalError(absl::StrCat("a read returned ", r.events, " events of ",
                                                  o.events));
        }
      }
    }
    const double bytes_per_event = double(set.entry_bytes) / o.events;
    const std::vector<double> raw_rates = rates(o.events, raw_s);
    const double raw_rate = Median(raw_rates);
    const std::string raw_text =
        absl::StrCat("raw iterator: ", EventsPerSecond(raw_rate), " ",
                     MiBPerSecond(raw_rate * bytes_per_event));
    auto row = [&](std::string text, const std::vector<double>& seconds, ResultRow::Goal goal) {
      const std::vector<double> r = rates(o.events, seconds);
      const double rate = Median(r);
      table.Add(ResultRow{std::move(text),
                          absl::StrCat(EventsPerSecond(rate), " ",
                                       MiBPerSecond(rate * bytes_per_event)),
                          raw_text, median_ratio(r, raw_rates), "", goal, 0.5});
    };
    row(absl::StrCat("3 replay, Replay pages of ", o.replay_page), replay_s,
        ResultRow::Goal::kAtLeast);
    if (extras) {
      row(absl::StrCat("3 replay, Follow (catch-up pages of ", o.replay_page, ")"), follow_s,
          ResultRow::Goal::kNone);
      row("3 raw iterator, store's ReadOptions", checked_s, ResultRow::Goal::kNone);
    }
  }
  RemoveTree(sub("keel-write"));

  // 4. reopen.
  if (o.cases.count("reopen")) {
    out << "\n[4] reopen: stores of " << o.reopen_streams << " streams built with raw LevelDB in "
        << "the durable layout (" << o.reopen_payload_bytes << "-byte payloads"
        << (o.reopen_compact ? ", fully compacted" : "") << "); median of " << o.reopen_reps
        << " opens each, page cache warm\n";
    std::vector<ReopenResult> results;
    for (uint64_t events : o.reopen_events) {
      const std::string path = sub(absl::StrCat("reopen-", events));
      const uint64_t need = EstimateReopenBytes(events, o.reopen_payload_bytes);
      const fs::space_info now = fs::space(root, ec);
      if (!ec && now.available < need + (uint64_t{4} << 30)) {
        out << "  " << Thousands(events) << " events: SKIPPED, needs about " << Bytes(need)
            << " and " << Bytes(now.available) << " are free (4 GiB kept in reserve)\n";
        continue;
      }
      out << "  " << Thousands(events) << " events: generating ... " << std::flush;
      KEEL_ASSIGN_OR_RETURN(ReopenResult result,
                            GenerateReopenStore(path, events, o.reopen_streams,
                                                o.reopen_payload_bytes, o.reopen_compact,
                                                o.seed + events));
      FlushFilesystem(root);
      out << Duration(result.generate_seconds) << " + compaction "
          << Duration(result.compact_seconds) << "; opening ... " << std::flush;
      KEEL_RETURN_IF_ERROR(MeasureReopen(path, o.reopen_streams, o.reopen_reps, result));
      out << "leveldb " << Duration(result.leveldb_open) << ", durable "
          << Duration(result.durable_open) << " (store " << Bytes(result.disk_bytes) << ")\n";
      if (!o.keep) RemoveTree(path);
      results.push_back(result);
    }
    for (const ReopenResult& r : results) {
      table.Add(ResultRow{
          absl::StrCat("4 reopen ", Thousands(r.events), " ev / ", Thousands(o.reopen_streams),
                       " streams"),
          Duration(r.durable_open), absl::StrCat("leveldb open: ", Duration(r.leveldb_open)),
          r.durable_open / r.leveldb_open, "x", ResultRow::Goal::kNone, 0});
    }
    if (results.size() >= 2) {
      const ReopenResult& small = results.front();
      const ReopenResult& large = results.back();
      table.Add(ResultRow{
          absl::StrCat("4 reopen flat: ", Thousands(large.events), " vs ", Thousands(small.events),
                       " ev"),
          Duration(large.durable_open),
          absl::StrCat(Thousands(small.events), " ev: ", Duration(small.durable_open)),
          large.durable_open / small.durable_open, "x", ResultRow::Goal::kAtMost, 2.0});
    }
  }

  out << "\n" << std::flush;
  const int misses = table.Print(out);
  out << "\nFigures are medians over rounds (write, replay) or slices (sync); each ratio is "
         "the median of the per-round (per-slice) keel/baseline ratios. Reopen rows: time / "
         "time, lower is better; \"flat\" = the largest store opens within 2x of the smallest. "
      << (table.targets() == 0 ? std::string("No case with a target ran.")
          : misses == 0    ? absl::StrCat("All targets met (", table.targets(), ").")
                           : absl::StrCat(misses, " of ", table.targets(), " targets missed."))
      << " Targets are printed, not asserted.\n";
  return absl::OkStatus();
}

}  // namespace

std::unique_ptr<BenchMode> NewStorageBench() { return std::make_unique<StorageBench>(); }

}  // namespace keel::bench
