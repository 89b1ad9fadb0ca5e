// Failures: what the crash loop's threads found wrong, collected from every
// thread and reported once at the end (a worker thread cannot end the
// test), grouped by what was checked so that a flood of one kind does not
// hide another.
#ifndef KEEL_TESTS_CRASH_FAILURES_H_
#define KEEL_TESTS_CRASH_FAILURES_H_

#include <atomic>
#include <cstddef>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "keel/core/mutex.h"

namespace keel::crash_test {

class Failures {
 public:
  // Records a failure of `kind` ("stored events", "SSE follower", ...);
  // the first kKeptPerKind of each kind are kept word for word.
  void Add(absl::string_view kind, std::string what);

  size_t count() const { return count_.load(); }
  bool empty() const { return count() == 0; }
  // Each kind with its count and the failures kept.
  std::string Describe() const;

  static constexpr size_t kKeptPerKind = 12;

 private:
  struct Kind {
    std::string name;
    size_t count = 0;
    std::vector<std::string> kept;
  };

  std::atomic<size_t> count_{0};
  mutable Mutex mutex_;
  std::vector<Kind> kinds_ ABSL_GUARDED_BY(mutex_);  // In order of the first failure.
};

}  // namespace keel::crash_test

#endif  // KEEL_TESTS_CRASH_FAILURES_H_
