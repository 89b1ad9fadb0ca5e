#include "keel/cmd/keel/server/json_fields.h"

#include <boost/json.hpp>

#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"

namespace keel::server {
namespace json = boost::json;
namespace {

const json::value* Field(const json::object& object, absl::string_view key) {
  const json::value* value = object.if_contains(json::string_view(key.data(), key.size()));
  return value == nullptr || value->is_null() ? nullptr : value;
}

}  // namespace

absl::StatusOr<std::optional<std::string>> OptionalJsonString(const json::object& object,
                                                              absl::string_view key,
                                                              absl::string_view where) {
  const json::value* value = Field(object, key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) return InvalidArgument(absl::StrCat(where, key, " must be a string"));
  return std::string(value->get_string());
}

absl::StatusOr<std::optional<uint64_t>> OptionalJsonUint(const json::object& object,
                                                         absl::string_view key,
                                                         absl::string_view where) {
  const json::value* value = Field(object, key);
  if (value == nullptr) return std::nullopt;
  if (value->is_uint64()) return value->get_uint64();
  if (value->is_int64() && value->get_int64() >= 0) {
    return static_cast<uint64_t>(value->get_int64());
  }
  return InvalidArgument(absl::StrCat(where, key, " must be a non-negative integer"));
}

absl::StatusOr<absl::Time> ParseRfc3339(absl::string_view text, absl::string_view field) {
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, text, &time, &error)) {
    return InvalidArgument(absl::StrCat(field, " must be an RFC 3339 time: ", error));
  }
  return time;
}

}  // namespace keel::server
