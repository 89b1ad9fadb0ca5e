#include "keel/core/metadata_store.h"

#include <map>

#include "absl/base/thread_annotations.h"
#include "absl/strings/match.h"
#include "keel/core/mutex.h"

namespace keel {
namespace {

class InMemoryMetadataStore final : public MetadataStore {
 public:
  absl::StatusOr<std::optional<std::string>> Get(absl::string_view key) override {
    ReaderMutexLock lock(&mu_);
    auto it = records_.find(key);
    if (it == records_.end()) return std::nullopt;
    return it->second;
  }

  absl::Status Put(absl::string_view key, absl::string_view value) override {
    MutexLock lock(&mu_);
    records_[std::string(key)] = std::string(value);
    return absl::OkStatus();
  }

  absl::Status Delete(absl::string_view key) override {
    MutexLock lock(&mu_);
    auto it = records_.find(key);
    if (it != records_.end()) records_.erase(it);
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<Record>> List(absl::string_view prefix) override {
    ReaderMutexLock lock(&mu_);
    std::vector<Record> out;
    for (auto it = records_.lower_bound(prefix);
         it != records_.end() && absl::StartsWith(it->first, prefix); ++it) {
      out.push_back(*it);
    }
    return out;
  }

 private:
  Mutex mu_;
  std::map<std::string, std::string, std::less<>> records_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

std::unique_ptr<MetadataStore> NewInMemoryMetadataStore() {
  return std::make_unique<InMemoryMetadataStore>();
}

}  // namespace keel
