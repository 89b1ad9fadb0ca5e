#include "keel/tests/crash/failures.h"

#include "absl/strings/str_cat.h"

namespace keel::crash_test {

void Failures::Add(absl::string_view kind, std::string what) {
  count_.fetch_add(1);
  MutexLock lock(&mutex_);
  auto it = std::find_if(kinds_.begin(), kinds_.end(),
                         [kind](const Kind& known) { return known.name == kind; });
  if (it == kinds_.end())
    it = kinds_.insert(kinds_.end(), Kind{.name = std::string(kind), .count = 0, .kept = {}});
  ++it->count;
  if (it->kept.size() < kKeptPerKind) it->kept.push_back(std::move(what));
}

std::string Failures::Describe() const {
  MutexLock lock(&mutex_);
  std::string out;
  for (const Kind& kind : kinds_) {
    absl::StrAppend(&out, kind.name, ": ", kind.count, kind.count == 1 ? " failure" : " failures",
                    "\n");
    for (const std::string& what : kind.kept) absl::StrAppend(&out, "  ", what, "\n");
    if (kind.count > kind.kept.size()) {
      absl::StrAppend(&out, "  ... and ", kind.count - kind.kept.size(), " more\n");
    }
  }
  return out;
}

}  // namespace keel::crash_test
