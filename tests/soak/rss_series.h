// RssSeries: a process's resident memory sampled over time, and the slope
// of its least-squares line, for the soak's flat-memory check.
#ifndef KEEL_TESTS_SOAK_RSS_SERIES_H_
#define KEEL_TESTS_SOAK_RSS_SERIES_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace keel::soak_test {

// The anonymous resident memory of `pid` (RssAnon in /proc), in MiB: the
// process's own memory. Resident pages of mapped files (RssFile) are left
// out: LevelDB maps its table files, and their pages, counted as they are
// read, are the kernel's page cache, which grows with the data read and is
// reclaimed under pressure, not memory the process holds.
absl::StatusOr<double> AnonymousResidentMiB(pid_t pid);

class RssSeries {
 public:
  struct Sample {
    absl::Duration at;  // Since the first sample.
    double mib = 0;
  };

  void Add(absl::Duration at, double mib) { samples_.push_back({at, mib}); }
  const std::vector<Sample>& samples() const { return samples_; }

  // MiB per minute of the least-squares line through the samples taken at
  // or after `from`; 0 with fewer than two.
  double SlopeMiBPerMinute(absl::Duration from) const;

  // "t=0s 41.2 MiB, t=10s 45.0 MiB, ...": every `every`-th sample.
  std::string Describe(size_t every) const;

 private:
  std::vector<Sample> samples_;
};

}  // namespace keel::soak_test

#endif  // KEEL_TESTS_SOAK_RSS_SERIES_H_
