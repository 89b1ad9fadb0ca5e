#include "cmd/keel/server/http_types.h"

#include "absl/strings/ascii.h"

namespace keel::server {

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
    if (name.capacity() > kKeptFieldBytes) std::string().swap(name);
    if (value.capacity() > kKeptFieldBytes) std::string().swap(value);
  }
  size_ = 0;
}

void HttpRequest::Clear() {
  method.clear();
  path.clear();
  segments.clear();
  query.clear();
  headers.Clear();
  body.clear();
}

}  // namespace keel::server
