#include "keel/statestore/fault_injecting_store.h"

#include <atomic>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"
#include "keel/statestore/error_iterator.h"

namespace keel {
namespace {

using KeySet = std::set<std::string, std::less<>>;

absl::Status ClosedError() { return Closed("fault-injecting store is closed"); }

uint64_t NextInstance() {
  static std::atomic<uint64_t> instances{0};
  return ++instances;
}

std::string CorruptValue(absl::string_view value) {
  std::string garbage = "\xff\xfe";
  while (garbage.size() <= value.size()) garbage += "corrupt ";
  garbage.resize(value.size() + 1);
  return garbage;
}

class CorruptingIterator final : public StoreIterator {
 public:
  CorruptingIterator(std::unique_ptr<StoreIterator> base, std::shared_ptr<const KeySet> corrupt)
      : base_(std::move(base)), corrupt_(std::move(corrupt)) {}

  void Seek(absl::string_view target) override { base_->Seek(target); }
  void SeekToLast() override { base_->SeekToLast(); }
  bool Valid() const override { return base_->Valid(); }
  void Next() override { base_->Next(); }
  void Prev() override { base_->Prev(); }
  absl::string_view key() const override { return base_->key(); }
  absl::string_view value() const override {
    if (corrupt_ == nullptr || !corrupt_->contains(base_->key())) return base_->value();
    garbage_ = CorruptValue(base_->value());
    return garbage_;
  }
  absl::Status status() const override { return base_->status(); }

 private:
  const std::unique_ptr<StoreIterator> base_;
  const std::shared_ptr<const KeySet> corrupt_;
  mutable std::string garbage_;  // Backs value() on a corrupt key.
};

}  // namespace

FaultInjectingStore::FaultInjectingStore(std::unique_ptr<StateStore> base)
    : owned_base_(std::move(base)), base_(owned_base_.get()), instance_(NextInstance()) {}

FaultInjectingStore::FaultInjectingStore(StateStore* base)
    : base_(base), instance_(NextInstance()) {}

absl::StatusOr<std::string> FaultInjectingStore::Get(absl::string_view key) {
  bool corrupt = false;
  {
    MutexLock lock(&mu_);
    if (closed_) return ClosedError();
    corrupt = corrupt_keys_ != nullptr && corrupt_keys_->contains(key);
  }
  KEEL_ASSIGN_OR_RETURN(std::string value, base_->Get(key));
  if (corrupt) return CorruptValue(value);
  return value;
}

absl::StatusOr<std::vector<FaultInjectingStore::Prior>> FaultInjectingStore::ReadPriors(
    const WriteBatch& batch) {
  std::vector<Prior> priors;
  KeySet seen;
  for (const WriteBatch::Op& op : batch.ops()) {
    if (!seen.insert(op.key).second) continue;
    absl::StatusOr<std::string> value = base_->Get(op.key);
    if (value.ok()) {
      priors.push_back(Prior{op.key, *std::move(value)});
    } else if (value.status().code() == absl::StatusCode::kNotFound) {
      priors.push_back(Prior{op.key, std::nullopt});
    } else {
      return value.status();
    }
  }
  return priors;
}

absl::Status FaultInjectingStore::Write(const WriteBatch& batch, const WriteOptions& options) {
  MutexLock lock(&mu_);
  if (closed_) return ClosedError();
  ++write_calls_;
  if (fail_call_ != 0 && write_calls_ == fail_call_) {
    fail_call_ = 0;
    return fail_call_status_;
  }
  if (successes_left_.has_value() && *successes_left_ == 0) return fail_after_status_;

  std::vector<Prior> priors;
  if (!options.sync) {
    KEEL_ASSIGN_OR_RETURN(priors, ReadPriors(batch));
  }
  KEEL_RETURN_IF_ERROR(base_->Write(batch, options));

  if (successes_left_.has_value()) --*successes_left_;
  ++writes_;
  if (options.sync) {
    ++synced_writes_;
    unsynced_.clear();  // Like an fsync of the log: everything so far is durable.
  } else {
    unsynced_.push_back(std::move(priors));
  }
  return absl::OkStatus();
}

std::unique_ptr<StoreIterator> FaultInjectingStore::NewIterator(const KeyRange& range) {
  std::shared_ptr<const KeySet> corrupt;
  {
    MutexLock lock(&mu_);
    if (closed_) return NewErrorIterator(ClosedError());
    corrupt = corrupt_keys_;
  }
  return std::make_unique<CorruptingIterator>(base_->NewIterator(range), std::move(corrupt));
}

absl::StatusOr<uint64_t> FaultInjectingStore::ApproximateSize(const KeyRange& range) {
  {
    MutexLock lock(&mu_);
    if (closed_) return ClosedError();
  }
  return base_->ApproximateSize(range);
}

absl::Status FaultInjectingStore::Close() {
  MutexLock lock(&mu_);
  closed_ = true;
  return absl::OkStatus();
}

std::string FaultInjectingStore::UnsyncedWritesLifetime() const {
  MutexLock lock(&mu_);
  if (lifetime_unknown_) return "";
  return absl::StrCat("fault-injecting store ", instance_, ", run ", crashes_);
}

void FaultInjectingStore::SetLifetimeUnknown() {
  MutexLock lock(&mu_);
  lifetime_unknown_ = true;
}

void FaultInjectingStore::FailNthWrite(int n, absl::Status status) {
  MutexLock lock(&mu_);
  fail_call_ = write_calls_ + static_cast<uint64_t>(n < 1 ? 1 : n);
  fail_call_status_ = std::move(status);
}

void FaultInjectingStore::FailWritesAfter(int n, absl::Status status) {
  MutexLock lock(&mu_);
  successes_left_ = static_cast<uint64_t>(n < 0 ? 0 : n);
  fail_after_status_ = std::move(status);
}

void FaultInjectingStore::ClearWriteFaults() {
  MutexLock lock(&mu_);
  fail_call_ = 0;
  successes_left_.reset();
}

void FaultInjectingStore::CorruptReadsOf(absl::string_view key) {
  MutexLock lock(&mu_);
  auto keys = corrupt_keys_ != nullptr ? std::make_shared<KeySet>(*corrupt_keys_)
                                       : std::make_shared<KeySet>();
  keys->emplace(key);
  corrupt_keys_ = std::move(keys);
}

void FaultInjectingStore::ClearCorruptReads() {
  MutexLock lock(&mu_);
  corrupt_keys_.reset();
}

absl::Status FaultInjectingStore::SimulateCrash() {
  MutexLock lock(&mu_);
  // Newest first, so that a key ends up with its value before the oldest
  // unsynced write.
  std::map<std::string, std::optional<std::string>> restore;
  for (auto write = unsynced_.rbegin(); write != unsynced_.rend(); ++write) {
    for (Prior& prior : *write) restore[prior.key] = std::move(prior.value);
  }
  WriteBatch undo;
  for (const auto& [key, value] : restore) {
    if (value.has_value()) {
      undo.Put(key, *value);
    } else {
      undo.Delete(key);
    }
  }
  unsynced_.clear();
  closed_ = false;
  ++crashes_;
  if (undo.empty()) return absl::OkStatus();
  return base_->Write(undo, WriteOptions{.sync = true});
}

void FaultInjectingStore::Reopen() {
  MutexLock lock(&mu_);
  closed_ = false;
}

uint64_t FaultInjectingStore::writes() const {
  MutexLock lock(&mu_);
  return writes_;
}

uint64_t FaultInjectingStore::synced_writes() const {
  MutexLock lock(&mu_);
  return synced_writes_;
}

}  // namespace keel
