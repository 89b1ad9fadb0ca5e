// ErrorIterator: a StoreIterator that is never valid and reports a fixed
// status. Stores return it from NewIterator() when they cannot iterate (for
// example after Close()), since NewIterator() itself has no status.
//
// Thread safety: immutable; safe to use from any thread.
#ifndef KEEL_STATESTORE_ERROR_ITERATOR_H_
#define KEEL_STATESTORE_ERROR_ITERATOR_H_

#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "keel/statestore/state_store.h"

namespace keel {

class ErrorIterator final : public StoreIterator {
 public:
  explicit ErrorIterator(absl::Status status) : status_(std::move(status)) {}

  void Seek(absl::string_view) override {}
  void SeekToLast() override {}
  bool Valid() const override { return false; }
  void Next() override {}
  void Prev() override {}
  absl::string_view key() const override { return {}; }
  absl::string_view value() const override { return {}; }
  absl::Status status() const override { return status_; }

 private:
  const absl::Status status_;
};

inline std::unique_ptr<StoreIterator> NewErrorIterator(absl::Status status) {
  return std::make_unique<ErrorIterator>(std::move(status));
}

}  // namespace keel

#endif  // KEEL_STATESTORE_ERROR_ITERATOR_H_
