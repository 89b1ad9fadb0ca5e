#include "keel/tests/soak/rss_series.h"

#include <fstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace keel::soak_test {

absl::StatusOr<double> AnonymousResidentMiB(pid_t pid) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, "RssAnon:")) continue;
    rest = absl::StripAsciiWhitespace(rest);
    absl::ConsumeSuffix(&rest, "kB");
    int64_t kib = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(rest), &kib)) break;
    return static_cast<double>(kib) / 1024;
  }
  return absl::NotFoundError(absl::StrCat("no RssAnon for process ", pid));
}

double RssSeries::SlopeMiBPerMinute(absl::Duration from) const {
  double n = 0, sum_t = 0, sum_m = 0, sum_tt = 0, sum_tm = 0;
  for (const Sample& sample : samples_) {
    if (sample.at < from) continue;
    const double t = absl::ToDoubleMinutes(sample.at);
    n += 1;
    sum_t += t;
    sum_m += sample.mib;
    sum_tt += t * t;
    sum_tm += t * sample.mib;
  }
  const double spread = n * sum_tt - sum_t * sum_t;
  if (n < 2 || spread <= 0) return 0;
  return (n * sum_tm - sum_t * sum_m) / spread;
}

std::string RssSeries::Describe(size_t every) const {
  std::string text;
  for (size_t i = 0; i < samples_.size(); i += std::max<size_t>(every, 1)) {
    absl::StrAppendFormat(&text, "%st=%ds %.1f MiB", text.empty() ? "" : ", ",
                          absl::ToInt64Seconds(samples_[i].at), samples_[i].mib);
  }
  return text;
}

}  // namespace keel::soak_test
