#include "keel/cmd/keel-bench/bench_report.h"

#include <algorithm>
#include <ostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace keel::bench {

std::string Thousands(uint64_t n) {
  std::string digits = absl::StrCat(n);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

std::string EventsPerSecond(double per_second) {
  return absl::StrCat(Thousands(static_cast<uint64_t>(per_second + 0.5)), " ev/s");
}

std::string MiBPerSecond(double bytes_per_second) {
  return absl::StrFormat("%.1f MiB/s", bytes_per_second / (1024.0 * 1024.0));
}

std::string Duration(double seconds) {
  if (seconds >= 1) return absl::StrFormat("%.2f s", seconds);
  return absl::StrFormat("%.1f ms", seconds * 1e3);
}

std::string Bytes(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 30)) return absl::StrFormat("%.2f GiB", bytes / double(1 << 30));
  return absl::StrFormat("%.1f MiB", bytes / double(1 << 20));
}

bool ResultRow::passed() const {
  switch (goal) {
    case Goal::kNone:
      return true;
    case Goal::kAtLeast:
      return ratio >= target;
    case Goal::kAtMost:
      return ratio <= target;
  }
  return true;
}

int ResultTable::Print(std::ostream& out) const {
  struct Cells {
    std::string label, figure, baseline, ratio, target, result;
  };
  std::vector<Cells> lines;
  lines.push_back({"case", "keel", "baseline (same run)", "ratio", "target", "result"});
  int misses = 0;
  for (const ResultRow& row : rows_) {
    Cells cells;
    cells.label = row.label;
    cells.figure = row.figure;
    cells.baseline = row.baseline;
    cells.ratio = row.ratio > 0 ? absl::StrFormat("%.2f%s", row.ratio, row.ratio_suffix) : "-";
    switch (row.goal) {
      case ResultRow::Goal::kNone:
        cells.target = "-";
        cells.result = "info";
        break;
      case ResultRow::Goal::kAtLeast:
        cells.target = absl::StrFormat(">= %.2f%s", row.target, row.ratio_suffix);
        break;
      case ResultRow::Goal::kAtMost:
        cells.target = absl::StrFormat("<= %.2f%s", row.target, row.ratio_suffix);
        break;
    }
    if (row.has_target()) {
      cells.result = row.passed() ? "PASS" : "MISS";
      if (!row.passed()) ++misses;
    }
    lines.push_back(std::move(cells));
  }
  size_t w[6] = {0, 0, 0, 0, 0, 0};
  for (const Cells& c : lines) {
    w[0] = std::max(w[0], c.label.size());
    w[1] = std::max(w[1], c.figure.size());
    w[2] = std::max(w[2], c.baseline.size());
    w[3] = std::max(w[3], c.ratio.size());
    w[4] = std::max(w[4], c.target.size());
    w[5] = std::max(w[5], c.result.size());
  }
  auto pad = [](const std::string& s, size_t width) {
    return s + std::string(width - s.size(), ' ');
  };
  auto rpad = [](const std::string& s, size_t width) {
    return std::string(width - s.size(), ' ') + s;
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    const Cells& c = lines[i];
    out << pad(c.label, w[0]) << " | " << rpad(c.figure, w[1]) << " | " << rpad(c.baseline, w[2])
        << " | " << rpad(c.ratio, w[3]) << " | " << pad(c.target, w[4]) << " | " << c.result
        << "\n";
    if (i == 0) {
      out << std::string(w[0], '-') << "-+-" << std::string(w[1], '-') << "-+-"
          << std::string(w[2], '-') << "-+-" << std::string(w[3], '-') << "-+-"
          << std::string(w[4], '-') << "-+-" << std::string(w[5], '-') << "\n";
    }
  }
  return misses;
}

}  // namespace keel::bench
