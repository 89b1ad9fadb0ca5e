// Helpers shared by `keel-bench` modes: a stopwatch, number formatting and
// the result table (figure, baseline, ratio, target, PASS/MISS).
//
// A result is printed, never asserted: PASS/MISS compares the ratio with the
// target and says nothing about the exit code.
//
// Thread safety: Stopwatch and the formatting functions are safe anywhere; a
// ResultTable is used by one thread.
#ifndef KEEL_CMD_KEEL_BENCH_BENCH_REPORT_H_
#define KEEL_CMD_KEEL_BENCH_BENCH_REPORT_H_

#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace keel::bench {

class Stopwatch {
 public:
  Stopwatch() : start_(std::chrono::steady_clock::now()) {}
  void Restart() { start_ = std::chrono::steady_clock::now(); }
  double Seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// 1234567 -> "1,234,567".
std::string Thousands(uint64_t n);
// "412,331 ev/s".
std::string EventsPerSecond(double per_second);
// "135.2 MiB/s".
std::string MiBPerSecond(double bytes_per_second);
// "1.23 s" or "45.6 ms".
std::string Duration(double seconds);
// "2.5 GB".
std::string Bytes(uint64_t bytes);

// The middle value (the upper middle of an even count); `values` not empty.
double Median(std::vector<double> values);

struct ResultRow {
  enum class Goal { kNone, kAtLeast, kAtMost };

  std::string label;     // What was measured.
  std::string figure;    // Keel's figure.
  std::string baseline;  // The baseline's figure (same run).
  double ratio = 0;      // figure / baseline, in the row's own sense.
  std::string ratio_suffix;  // "" or "x" (a gain).
  Goal goal = Goal::kNone;
  double target = 0;

  bool has_target() const { return goal != Goal::kNone; }
  bool passed() const;
};

class ResultTable {
 public:
  void Add(ResultRow row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  // Rows that carry a target.
  int targets() const {
    int n = 0;
    for (const ResultRow& row : rows_) n += row.has_target() ? 1 : 0;
    return n;
  }
  // Prints a header and one line per row; returns how many targets were missed.
  int Print(std::ostream& out) const;

 private:
  std::vector<ResultRow> rows_;
};

}  // namespace keel::bench

#endif  // KEEL_CMD_KEEL_BENCH_BENCH_REPORT_H_
