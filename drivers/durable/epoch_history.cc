#include "keel/drivers/durable/epoch_history.h"

#include <algorithm>

namespace keel::durable {

EpochHistory::EpochHistory(uint64_t epoch, std::vector<uint64_t> earlier, EpochStarts starts)
    : epoch_(epoch), earlier_(std::move(earlier)), starts_(std::move(starts)) {}

bool EpochHistory::NeedsStart(absl::string_view stream) const {
  if (earlier_.empty()) return false;
  ReaderMutexLock lock(&mu_);
  auto it = starts_.find(stream);
  if (it == starts_.end()) return true;
  return std::none_of(it->second.begin(), it->second.end(),
                      [this](const EpochStart& start) { return start.epoch == epoch_; });
}

void EpochHistory::Started(absl::string_view stream, uint64_t first) {
  MutexLock lock(&mu_);
  starts_[stream].push_back(EpochStart{epoch_, first});
}

size_t EpochHistory::IndexOf(uint64_t epoch) const {
  auto it = std::find(earlier_.begin(), earlier_.end(), epoch);
  return static_cast<size_t>(it - earlier_.begin());  // The current epoch: earlier_.size().
}

std::vector<EarlierEpoch> EpochHistory::CursorBounds(absl::string_view stream) const {
  if (earlier_.empty()) return {};
  std::vector<EarlierEpoch> bounds;
  bounds.reserve(earlier_.size() + 1);
  for (uint64_t epoch : earlier_) bounds.push_back(EarlierEpoch{epoch});
  bounds.push_back(EarlierEpoch{0});  // Older than all of them.
  ReaderMutexLock lock(&mu_);
  auto it = starts_.find(stream);
  if (it == starts_.end()) return bounds;
  // A start in epoch k bounds the cursors of every epoch before k; every
  // start, and the floor of forgotten epochs, bounds the entry of epoch 0.
  for (const EpochStart& start : it->second) {
    bounds.back().valid_below = std::min(bounds.back().valid_below, start.first);
    if (start.epoch == kForgottenEpochs) continue;
    const size_t index = IndexOf(start.epoch);
    for (size_t i = 0; i < index; ++i) {  // IndexOf is at most earlier_.size().
      bounds[i].valid_below = std::min(bounds[i].valid_below, start.first);
    }
  }
  return bounds;
}

EpochHistory::Span EpochHistory::SpanOf(absl::string_view stream, uint64_t sequence) const {
  // A stream with no start at or below `sequence` got it in the store's
  // first epoch.
  Span span{earlier_.empty() ? epoch_ : earlier_.front(), UINT64_MAX};
  if (earlier_.empty()) return span;
  ReaderMutexLock lock(&mu_);
  auto it = starts_.find(stream);
  if (it == starts_.end()) return span;
  uint64_t found = 0;
  for (const EpochStart& start : it->second) {
    if (start.first <= sequence && start.first >= found) {
      found = start.first;
      span.epoch = start.epoch;
    } else if (start.first > sequence) {
      span.end = std::min(span.end, start.first);
    }
  }
  return span;
}

}  // namespace keel::durable
