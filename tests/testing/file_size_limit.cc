#include "keel/tests/testing/file_size_limit.h"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace keel::testing {

ScopedFileSizeLimit::ScopedFileSizeLimit(uint64_t bytes) {
  std::signal(SIGXFSZ, SIG_IGN);
  rlimit capped{};
  if (getrlimit(RLIMIT_FSIZE, &previous_) == 0) {
    capped = previous_;
    capped.rlim_cur = bytes;
    if (setrlimit(RLIMIT_FSIZE, &capped) == 0) return;
  }
  std::cerr << "ScopedFileSizeLimit: cannot cap file sizes\n";
  std::abort();  // A test that meant to fail writes would pass for nothing.
}

ScopedFileSizeLimit::~ScopedFileSizeLimit() { setrlimit(RLIMIT_FSIZE, &previous_); }

uint64_t NewestLogBytes(const std::string& db_dir) {
  std::filesystem::path newest;
  for (const auto& entry : std::filesystem::directory_iterator(db_dir)) {
    if (entry.path().extension() == ".log" && entry.path() > newest) newest = entry.path();
  }
  return std::filesystem::file_size(newest);
}

}  // namespace keel::testing
