#include "keel/cmd/keel/server/http_types.h"

#include "absl/strings/ascii.h"

namespace keel::server {
namespace {

// Empties `value`, giving its storage back when it holds more than `kept`.
template <typename T>
void ClearKeeping(T& value, size_t kept) {
  if (value.capacity() > kept) {
    T().swap(value);
  } else {
    value.clear();
  }
}

}  // namespace

absl::string_view HeaderFields::Get(absl::string_view lower_name) const {
  for (size_t i = size_; i > 0; --i) {
    if (fields_[i - 1].first == lower_name) return fields_[i - 1].second;
  }
  return absl::string_view();
}

void HeaderFields::Add(absl::string_view name, absl::string_view value) {
  if (size_ == fields_.size()) fields_.emplace_back();
  auto& [stored_name, stored_value] = fields_[size_++];
  stored_name.assign(name.data(), name.size());
  absl::AsciiStrToLower(&stored_name);
  stored_value.assign(value.data(), value.size());
}

void HeaderFields::Clear() {
  if (fields_.size() > kKeptFields) {
    fields_.resize(kKeptFields);
    fields_.shrink_to_fit();
  }
  for (auto& [name, value] : fields_) {
    ClearKeeping(name, kKeptFieldBytes);
    ClearKeeping(value, kKeptFieldBytes);
  }
  size_ = 0;
}

void HttpRequest::Clear() {
  method.clear();
  ClearKeeping(path, kKeptPathBytes);
  ClearKeeping(segments, kKeptSegments);
  query.clear();
  headers.Clear();
  ClearKeeping(body, kKeptBodyBytes);
  grant.reset();
  limit_key.clear();
}

}  // namespace keel::server
