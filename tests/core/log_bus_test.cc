// The storage engine over a log it does not control: what the log hands
// back is checked (a hole in a stream is data loss, never skipped), and a
// log that fails an append leaves no sequence consumed.
#include "keel/core/log_bus.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "keel/core/mutex.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel {
namespace {

using ::keel::testing::StatusIs;

// Events in a map per stream, so a test can take one away behind the
// engine's back; Append fails while `fail_appends` is set.
class MapLog final : public StreamLog {
 public:
  uint64_t epoch() const override { return 7; }

  absl::StatusOr<LogBounds> Bounds(absl::string_view stream) override {
    MutexLock lock(&mu_);
    return BoundsLocked(streams_[stream]);
  }
  absl::StatusOr<std::vector<std::pair<std::string, LogBounds>>> List(absl::string_view prefix,
                                                                      size_t limit) override {
    MutexLock lock(&mu_);
    std::vector<std::pair<std::string, LogBounds>> listed;
    for (auto& [name, stream] : streams_) listed.emplace_back(name, BoundsLocked(stream));
    return listed;
  }
  absl::Status Read(absl::string_view stream, uint64_t from, uint64_t to,
                    ReadSink& sink) override {
    MutexLock lock(&mu_);
    Stream& s = streams_[stream];
    for (auto it = s.events.lower_bound(from); it != s.events.end() && it->first <= to; ++it) {
      sink.Slot() = it->second;
      if (!sink.Take()) break;
    }
    return absl::OkStatus();
  }
  absl::Status Append(absl::Span<const LogAppend> group) override {
    MutexLock lock(&mu_);
    if (fail_appends) return absl::UnavailableError("the log is down");
    for (const LogAppend& part : group) {
      Stream& s = streams_[part.stream];
      for (const Event& event : part.events) s.events[event.sequence] = event;
      s.next += part.events.size();
    }
    return absl::OkStatus();
  }
  absl::Status TrimPrefix(absl::string_view stream, const LogTrim& cut) override {
    return absl::UnimplementedError("not used here");
  }

  void Lose(absl::string_view stream, uint64_t sequence) {
    MutexLock lock(&mu_);
    streams_[stream].events.erase(sequence);
  }
  bool fail_appends = false;

 private:
  struct Stream {
    std::map<uint64_t, Event> events;
    uint64_t next = 1;
  };
  static LogBounds BoundsLocked(const Stream& s) {
    LogBounds bounds;
    bounds.first = s.events.empty() ? s.next : s.events.begin()->first;
    bounds.next = s.next;
    return bounds;
  }

  Mutex mu_;
  absl::flat_hash_map<std::string, Stream> streams_;
};

Event NewEvent() {
  Event event;
  event.stream = "orders";
  event.type = "order.created";
  event.payload = "{}";
  return event;
}

class LogBusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto log = std::make_unique<MapLog>();
    log_ = log.get();
    ASSERT_OK_AND_ASSIGN(bus_, NewLogBus(std::move(log), DriverContext{}));
  }

  MapLog* log_ = nullptr;
  std::unique_ptr<EventBus> bus_;
};

TEST_F(LogBusTest, AnEventMissingFromTheLogIsDataLossNotSkipped) {
  for (int i = 0; i < 3; ++i) ASSERT_OK(bus_->Publish(NewEvent()).status());
  log_->Lose("orders", 2);
  ReplayRequest request;
  request.stream = "orders";
  absl::StatusOr<ReplayPage> page = bus_->replayer()->Replay(request);
  EXPECT_THAT(page, StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(page.status().message(), ::testing::HasSubstr("event 2"));
}

TEST_F(LogBusTest, AFailedAppendConsumesNoSequence) {
  ASSERT_OK(bus_->Publish(NewEvent()).status());
  log_->fail_appends = true;
  EXPECT_THAT(bus_->Publish(NewEvent()), StatusIs(absl::StatusCode::kUnavailable));
  log_->fail_appends = false;
  ASSERT_OK_AND_ASSIGN(Receipt receipt, bus_->Publish(NewEvent()));
  EXPECT_EQ(receipt.sequence, 2u);
}

}  // namespace
}  // namespace keel
