// TempDir: a fresh directory under the test temp root, removed on destruction.
#ifndef KEEL_TESTS_TESTING_TEMP_DIR_H_
#define KEEL_TESTS_TESTING_TEMP_DIR_H_

#include <filesystem>
#include <string>

namespace keel::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string Sub(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace keel::testing

#endif  // KEEL_TESTS_TESTING_TEMP_DIR_H_
