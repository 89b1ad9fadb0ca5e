#include "keel/tests/coldstore/cold_store_backends.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel {
namespace {

class FsBackend final : public ColdStoreBackend {
 public:
  absl::StatusOr<std::unique_ptr<ColdStore>> NewStore() override {
    return OpenColdStore("fs", Config{{"path", dir_.Sub(absl::StrCat("store", next_++))}});
  }

 private:
  testing::TempDir dir_;
  int next_ = 0;
};

}  // namespace

std::vector<BackendMaker> AllBackendMakers() {
  return {
      {"fs", [] { return std::make_unique<FsBackend>(); }},
  };
}

}  // namespace keel
