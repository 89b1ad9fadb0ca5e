#include "keel/statestore/memory/memory_store.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/statestore/error_iterator.h"

namespace keel {
namespace {

absl::Status ClosedError() { return Closed("memory store is closed"); }

// Iterates a private copy of the entries of one range.
class SnapshotIterator final : public StoreIterator {
 public:
  using Entries = std::vector<std::pair<std::string, std::string>>;

  explicit SnapshotIterator(Entries entries)
      : entries_(std::move(entries)), pos_(entries_.size()) {}

  void Seek(absl::string_view target) override {
    auto it = std::lower_bound(
        entries_.begin(), entries_.end(), target,
        [](const auto& entry, absl::string_view t) { return absl::string_view(entry.first) < t; });
    pos_ = static_cast<size_t>(it - entries_.begin());
  }
  void SeekToLast() override { pos_ = entries_.empty() ? 0 : entries_.size() - 1; }
  bool Valid() const override { return pos_ < entries_.size(); }
  void Next() override {
    if (Valid()) ++pos_;
  }
  void Prev() override {
    if (!Valid()) return;
    pos_ = pos_ == 0 ? entries_.size() : pos_ - 1;
  }
  absl::string_view key() const override { return entries_[pos_].first; }
  absl::string_view value() const override { return entries_[pos_].second; }
  absl::Status status() const override { return absl::OkStatus(); }

 private:
  const Entries entries_;
  size_t pos_;  // entries_.size() when not valid.
};

class MemoryStoreFactory final : public StoreFactory {
 public:
  absl::string_view name() const override { return "memory"; }
  absl::string_view description() const override {
    return "ordered map in process memory; nothing survives the process";
  }
  StoreTraits Traits(const Config&) const override {
    return StoreTraits{.synced_writes_wait_for_disk = false, .keeps_data = false};
  }
  absl::StatusOr<std::unique_ptr<StateStore>> Open(const Config& config) const override {
    return std::make_unique<MemoryStore>();
  }
};

}  // namespace

absl::StatusOr<std::string> MemoryStore::Get(absl::string_view key) {
  MutexLock lock(&mu_);
  if (closed_) return ClosedError();
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    return NotFound(absl::StrCat("key not found: '", absl::CHexEscape(key.substr(0, 64)), "'"));
  }
  return it->second;
}

absl::Status MemoryStore::Write(const WriteBatch& batch, const WriteOptions& options) {
  MutexLock lock(&mu_);
  if (closed_) return ClosedError();
  for (const WriteBatch::Op& op : batch.ops()) {
    if (op.kind == WriteBatch::Op::Kind::kPut) {
      entries_.insert_or_assign(op.key, op.value);
    } else {
      auto it = entries_.find(op.key);
      if (it != entries_.end()) entries_.erase(it);
    }
  }
  return absl::OkStatus();
}

std::unique_ptr<StoreIterator> MemoryStore::NewIterator(const KeyRange& range) {
  SnapshotIterator::Entries copy;
  {
    MutexLock lock(&mu_);
    if (closed_) return NewErrorIterator(ClosedError());
    for (auto it = entries_.lower_bound(range.start);
         it != entries_.end() && (range.limit.empty() || it->first < range.limit); ++it) {
      copy.emplace_back(it->first, it->second);
    }
  }
  return std::make_unique<SnapshotIterator>(std::move(copy));
}

absl::StatusOr<uint64_t> MemoryStore::ApproximateSize(const KeyRange& range) {
  MutexLock lock(&mu_);
  if (closed_) return ClosedError();
  uint64_t bytes = 0;
  for (auto it = entries_.lower_bound(range.start);
       it != entries_.end() && (range.limit.empty() || it->first < range.limit); ++it) {
    bytes += it->first.size() + it->second.size();
  }
  return bytes;
}

absl::Status MemoryStore::Close() {
  MutexLock lock(&mu_);
  closed_ = true;
  entries_.clear();
  return absl::OkStatus();
}

}  // namespace keel

KEEL_REGISTER_STORE(memory, ::keel::MemoryStoreFactory)
