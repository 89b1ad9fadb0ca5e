#include "keel/tests/testing/temp_dir.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace keel::testing {

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  const char* root = std::getenv("TEST_TMPDIR");
  std::filesystem::path base = root != nullptr ? root : std::filesystem::temp_directory_path();
  path_ = base / absl::StrCat("keel-test-", getpid(), "-", counter.fetch_add(1));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace keel::testing
