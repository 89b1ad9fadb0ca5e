#include "keel/statestore/state_store.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "keel/core/status_macros.h"
#include "keel/statestore/builtin_stores.h"

namespace keel {

void WriteBatch::PutOwned(std::string key, std::string value) {
  bytes_ += key.size() + value.size();
  ops_.push_back(Op{Op::Kind::kPut, std::move(key), std::move(value)});
}

void WriteBatch::Put(absl::string_view key, absl::string_view value) {
  PutOwned(std::string(key), std::string(value));
}

void WriteBatch::Delete(absl::string_view key) {
  ops_.push_back(Op{Op::Kind::kDelete, std::string(key), std::string()});
  bytes_ += key.size();
}

void WriteBatch::Append(const WriteBatch& other) {
  if (&other == this) {
    std::vector<Op> copy = ops_;
    ops_.insert(ops_.end(), copy.begin(), copy.end());
    bytes_ *= 2;
    return;
  }
  ops_.insert(ops_.end(), other.ops_.begin(), other.ops_.end());
  bytes_ += other.bytes_;
}

KeyRange KeyRange::Prefix(absl::string_view prefix) {
  KeyRange range;
  range.start = std::string(prefix);
  std::string limit(prefix);
  // Drop trailing 0xff bytes, then increment the last remaining byte. When
  // every byte is 0xff (or the prefix is empty) there is no finite upper
  // bound and the limit stays empty.
  while (!limit.empty() && static_cast<unsigned char>(limit.back()) == 0xff) limit.pop_back();
  if (!limit.empty()) {
    limit.back() = static_cast<char>(static_cast<unsigned char>(limit.back()) + 1);
  }
  range.limit = std::move(limit);
  return range;
}

Registry<StoreFactory>& StoreRegistry() {
  static Registry<StoreFactory>* const registry = new Registry<StoreFactory>("store");
  return *registry;
}

absl::Status ValidateStoreOptions(const StoreFactory& factory, const Config& config) {
  return ValidateOptions(absl::StrCat("store '", factory.name(), "'"), factory.options(), config);
}

absl::StatusOr<std::unique_ptr<StateStore>> OpenStore(absl::string_view name,
                                                      const Config& config) {
  LinkBuiltinStores();
  KEEL_ASSIGN_OR_RETURN(std::shared_ptr<StoreFactory> factory, StoreRegistry().Find(name));
  KEEL_RETURN_IF_ERROR(ValidateStoreOptions(*factory, config));
  return factory->Open(config);
}

void AppendBigEndian64(std::string& out, uint64_t value) {
  char bytes[8];
  for (int i = 7; i >= 0; --i) {
    bytes[i] = static_cast<char>(value & 0xff);
    value >>= 8;
  }
  out.append(bytes, sizeof(bytes));
}

uint64_t DecodeBigEndian64(absl::string_view bytes) {
  uint64_t value = 0;
  for (int i = 0; i < 8; ++i) value = (value << 8) | static_cast<unsigned char>(bytes[i]);
  return value;
}

}  // namespace keel
