#include "keel/drivers/durable/store_metadata.h"

#include "absl/strings/str_cat.h"
#include "keel/core/status_macros.h"

namespace keel::durable {
namespace {

constexpr absl::string_view kPrefix = "X";

class StoreMetadata final : public MetadataStore {
 public:
  explicit StoreMetadata(std::shared_ptr<StateStore> store) : store_(std::move(store)) {}

  absl::StatusOr<std::optional<std::string>> Get(absl::string_view key) override {
    absl::StatusOr<std::string> value = store_->Get(absl::StrCat(kPrefix, key));
    if (value.status().code() == absl::StatusCode::kNotFound) return std::nullopt;
    if (!value.ok()) return value.status();
    return *std::move(value);
  }

  absl::Status Put(absl::string_view key, absl::string_view value) override {
    WriteBatch batch;
    batch.Put(absl::StrCat(kPrefix, key), value);
    return store_->Write(batch, WriteOptions{.sync = true});
  }

  absl::Status Delete(absl::string_view key) override {
    WriteBatch batch;
    batch.Delete(absl::StrCat(kPrefix, key));
    return store_->Write(batch, WriteOptions{.sync = true});
  }

  absl::StatusOr<std::vector<Record>> List(absl::string_view prefix) override {
    const std::string start = absl::StrCat(kPrefix, prefix);
    std::unique_ptr<StoreIterator> it = store_->NewIterator(KeyRange::Prefix(start));
    std::vector<Record> out;
    for (it->Seek(start); it->Valid(); it->Next()) {
      out.emplace_back(std::string(it->key().substr(kPrefix.size())), std::string(it->value()));
    }
    KEEL_RETURN_IF_ERROR(it->status());
    return out;
  }

 private:
  const std::shared_ptr<StateStore> store_;
};

}  // namespace

std::string MetadataRecordKey(absl::string_view key) { return absl::StrCat(kPrefix, key); }

std::unique_ptr<MetadataStore> NewStoreMetadata(std::shared_ptr<StateStore> store) {
  return std::make_unique<StoreMetadata>(std::move(store));
}

}  // namespace keel::durable
