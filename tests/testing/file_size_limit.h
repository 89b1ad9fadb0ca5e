// ScopedFileSizeLimit: makes writes fail for real, the way a full disk
// does, by capping the size a file of this process may grow to
// (RLIMIT_FSIZE). A write past the cap fails with EFBIG (SIGXFSZ is
// ignored from then on, so it does not end the process); the cap is lifted
// when the object goes. Only files that grow are affected: overwrites of
// existing bytes still succeed.
//
// NewestLogBytes gives the size of the newest LevelDB write-ahead log in a
// database directory, for a cap just past it.
//
// Thread safety: the cap applies to every thread of the process; use it
// where nothing else writes files.
#ifndef KEEL_TESTS_TESTING_FILE_SIZE_LIMIT_H_
#define KEEL_TESTS_TESTING_FILE_SIZE_LIMIT_H_

#include <sys/resource.h>

#include <cstdint>
#include <string>

namespace keel::testing {

class ScopedFileSizeLimit {
 public:
  explicit ScopedFileSizeLimit(uint64_t bytes);
  ~ScopedFileSizeLimit();
  ScopedFileSizeLimit(const ScopedFileSizeLimit&) = delete;
  ScopedFileSizeLimit& operator=(const ScopedFileSizeLimit&) = delete;

 private:
  rlimit previous_;
};

uint64_t NewestLogBytes(const std::string& db_dir);

}  // namespace keel::testing

#endif  // KEEL_TESTS_TESTING_FILE_SIZE_LIMIT_H_
