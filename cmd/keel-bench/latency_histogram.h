// Histogram: a log-linear histogram of latencies in microseconds (relative
// error < 0.1%), for the percentiles the fan-out benchmarks report.
//
// Thread safety: none; each thread fills its own and they are merged.
#ifndef KEEL_CMD_KEEL_BENCH_LATENCY_HISTOGRAM_H_
#define KEEL_CMD_KEEL_BENCH_LATENCY_HISTOGRAM_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace keel::bench {

// Log-linear histogram of microseconds (relative error < 0.1%).
class Histogram {
 public:
  void Add(uint64_t micros) {
    const size_t index = Index(micros);
    if (index >= counts_.size()) counts_.resize(index + 1, 0);
    ++counts_[index];
    ++count_;
    max_ = std::max(max_, micros);
  }
  void Merge(const Histogram& other) {
    if (other.counts_.size() > counts_.size()) counts_.resize(other.counts_.size(), 0);
    for (size_t i = 0; i < other.counts_.size(); ++i) counts_[i] += other.counts_[i];
    count_ += other.count_;
    max_ = std::max(max_, other.max_);
  }
  uint64_t count() const { return count_; }
  uint64_t max() const { return max_; }
  // Upper bound of the bucket holding the p-th percentile.
  uint64_t Percentile(double p) const {
    if (count_ == 0) return 0;
    const uint64_t rank = static_cast<uint64_t>(p / 100.0 * static_cast<double>(count_ - 1)) + 1;
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= rank) return std::min(Upper(i), max_);
    }
    return max_;
  }

 private:
  static constexpr uint64_t kLinear = 1024;
  static size_t Index(uint64_t v) {
    if (v < 2 * kLinear) return v;
    const int shift = std::bit_width(v) - 11;  // v >> shift in [1024, 2048).
    return 2 * kLinear + (shift - 1) * kLinear + ((v >> shift) - kLinear);
  }
  static uint64_t Upper(size_t index) {
    if (index < 2 * kLinear) return index;
    const size_t shift = (index - 2 * kLinear) / kLinear + 1;
    const uint64_t mantissa = (index - 2 * kLinear) % kLinear + kLinear;
    return ((mantissa + 1) << shift) - 1;
  }
  std::vector<uint64_t> counts_;
  uint64_t count_ = 0;
  uint64_t max_ = 0;
};

}  // namespace keel::bench

#endif  // KEEL_CMD_KEEL_BENCH_LATENCY_HISTOGRAM_H_
