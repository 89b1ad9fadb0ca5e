#include "keel/tests/coldstore/cold_store_backends.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "keel/core/status_macros.h"
#include "keel/tests/coldstore/s3rver_process.h"
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

// One s3rver for the whole test binary (it takes a second or two to
// start); each store is a fresh key prefix in its bucket.
class S3Backend final : public ColdStoreBackend {
 public:
  absl::StatusOr<std::unique_ptr<ColdStore>> NewStore() override {
    // Static, not leaked: their destructors stop the server, then remove
    // its data, when the test binary exits.
    static testing::TempDir dir;
    static absl::StatusOr<std::unique_ptr<testing::S3rverProcess>> server =
        testing::S3rverProcess::Start(KEEL_S3RVER_INSTALL_DIR, dir.Sub("s3rver"));
    static std::atomic<int> next{0};
    if (!server.ok()) return server.status();
    Config config = (*server)->StoreConfig(absl::StrCat("store", next.fetch_add(1)));
    // Listings of a few pages in the tests' few objects.
    config.Set("list_page_keys", "10");
    return OpenColdStore("s3", config);
  }
};

}  // namespace

std::vector<BackendMaker> AllBackendMakers() {
  return {
      {"fs", [] { return std::make_unique<FsBackend>(); }},
      {"s3", [] { return std::make_unique<S3Backend>(); }},
  };
}

}  // namespace keel
