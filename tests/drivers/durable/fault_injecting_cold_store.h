// A ColdStore wrapper for tests: it can be down (every call kUnavailable,
// as an unreachable endpoint after its retries) and can lose the response
// of a put that did land (the caller sees kUnavailable, the object is
// there), and it counts puts.
#ifndef KEEL_TESTS_DRIVERS_DURABLE_FAULT_INJECTING_COLD_STORE_H_
#define KEEL_TESTS_DRIVERS_DURABLE_FAULT_INJECTING_COLD_STORE_H_

#include <atomic>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "keel/coldstore/cold_store.h"
#include "keel/core/errors.h"

namespace keel::testing {

class FaultInjectingColdStore final : public ColdStore {
 public:
  explicit FaultInjectingColdStore(std::unique_ptr<ColdStore> base) : base_(std::move(base)) {}

  void SetDown(bool down) { down_ = down; }
  void LoseNextPutResponse() { lose_put_ = true; }
  int puts() const { return puts_; }

  absl::StatusOr<PutOutcome> PutIfAbsent(absl::string_view name, absl::string_view bytes) override {
    if (down_) return Down(name);
    ++puts_;
    absl::StatusOr<PutOutcome> outcome = base_->PutIfAbsent(name, bytes);
    if (outcome.ok() && lose_put_.exchange(false)) {
      return Unavailable(absl::StrCat("put of ", name, ": connection reset before the response"));
    }
    return outcome;
  }
  absl::StatusOr<std::string> ReadRange(absl::string_view name, uint64_t offset,
                                        uint64_t length) override {
    if (down_) return Down(name);
    return base_->ReadRange(name, offset, length);
  }
  absl::StatusOr<uint64_t> Size(absl::string_view name) override {
    if (down_) return Down(name);
    return base_->Size(name);
  }
  absl::Status Delete(absl::string_view name) override {
    if (down_) return Down(name);
    return base_->Delete(name);
  }
  absl::StatusOr<std::vector<ObjectInfo>> List(absl::string_view prefix) override {
    if (down_) return Down(prefix);
    return base_->List(prefix);
  }
  std::string Describe() const override { return base_->Describe(); }

 private:
  static absl::Status Down(absl::string_view name) {
    return Unavailable(absl::StrCat(name, ": the cold store does not answer"));
  }

  const std::unique_ptr<ColdStore> base_;
  std::atomic<bool> down_{false};
  std::atomic<bool> lose_put_{false};
  std::atomic<int> puts_{0};
};

}  // namespace keel::testing

#endif  // KEEL_TESTS_DRIVERS_DURABLE_FAULT_INJECTING_COLD_STORE_H_
