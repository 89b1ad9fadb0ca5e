// Config: named string options for a driver or store, as they come from
// flags, a config file or a host program, with typed, validated accessors.
//
// Thread safety: a value type; const methods are safe to call concurrently.
#ifndef KEEL_CORE_CONFIG_H_
#define KEEL_CORE_CONFIG_H_

#include <cstdint>
#include <map>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace keel {

class Config {
 public:
  Config() = default;
  Config(std::initializer_list<std::pair<const std::string, std::string>> init) : values_(init) {}

  void Set(absl::string_view key, absl::string_view value) { values_[std::string(key)] = std::string(value); }
  bool Has(absl::string_view key) const { return values_.count(std::string(key)) > 0; }
  const std::map<std::string, std::string>& values() const { return values_; }

  std::string GetString(absl::string_view key, absl::string_view fallback) const;
  // kInvalidArgument naming the key when the value is not a valid number/
  // bool/duration ("250ms", "2m") or is out of [min, max].
  absl::StatusOr<uint64_t> GetUint(absl::string_view key, uint64_t fallback, uint64_t min = 0,
                                   uint64_t max = UINT64_MAX) const;
  absl::StatusOr<bool> GetBool(absl::string_view key, bool fallback) const;
  absl::StatusOr<absl::Duration> GetDuration(absl::string_view key, absl::Duration fallback) const;

  // Parses "k=v" and merges it; kInvalidArgument when there is no '='.
  absl::Status SetFromAssignment(absl::string_view assignment);

 private:
  std::map<std::string, std::string> values_;
};

}  // namespace keel

#endif  // KEEL_CORE_CONFIG_H_
