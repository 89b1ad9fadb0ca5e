// FinalHeads: the last sequence of each stream once the publishers stopped
// and the final replay read them, for the threads that read until they got
// everything (the SSE followers, the consumer group).
#ifndef KEEL_TESTS_CRASH_FINAL_HEADS_H_
#define KEEL_TESTS_CRASH_FINAL_HEADS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "keel/core/mutex.h"

namespace keel::crash_test {

class FinalHeads {
 public:
  void Set(std::map<std::string, uint64_t> heads) {
    MutexLock lock(&mutex_);
    heads_ = std::move(heads);
  }
  // Unknown (nullopt) while publishers may still publish.
  std::optional<uint64_t> Of(const std::string& stream) const {
    MutexLock lock(&mutex_);
    if (!heads_) return std::nullopt;
    auto it = heads_->find(stream);
    return it == heads_->end() ? uint64_t{0} : it->second;
  }

 private:
  mutable Mutex mutex_;
  std::optional<std::map<std::string, uint64_t>> heads_ ABSL_GUARDED_BY(mutex_);
};

}  // namespace keel::crash_test

#endif  // KEEL_TESTS_CRASH_FINAL_HEADS_H_
