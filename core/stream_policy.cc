#include "keel/core/stream_policy.h"

#include <functional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "keel/core/errors.h"
#include "keel/core/publish_validation.h"
#include "keel/core/status_macros.h"

namespace keel {
namespace {

absl::StatusOr<uint64_t> ParseBytes(absl::string_view key, absl::string_view text) {
  uint64_t unit = 1;
  for (auto [suffix, size] : {std::pair<absl::string_view, uint64_t>{"KiB", 1ull << 10},
                              {"MiB", 1ull << 20}, {"GiB", 1ull << 30}}) {
    if (absl::ConsumeSuffix(&text, suffix)) unit = size;
  }
  uint64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value > UINT64_MAX / unit) {
    return InvalidArgument(absl::StrCat("policy key '", key, "': '", text,
                                        "' is not a byte count such as 4096 or 64MiB"));
  }
  return value * unit;
}

absl::StatusOr<absl::Duration> ParseDurationValue(absl::string_view key, absl::string_view text) {
  absl::Duration value;
  if (!absl::ParseDuration(text, &value) || value < absl::ZeroDuration()) {
    return InvalidArgument(absl::StrCat("policy key '", key, "': '", text,
                                        "' is not a duration such as 250ms, 2m or 168h"));
  }
  return value;
}

// One key of the text form: how to print it and how to parse it into a policy.
struct Field {
  absl::string_view key;
  std::function<std::string(const StreamPolicy&)> print;
  std::function<absl::Status(absl::string_view key, absl::string_view text, StreamPolicy&)> parse;
};

Field DurationField(absl::string_view key, absl::Duration StreamPolicy::*group_less,
                    RetentionLimits StreamPolicy::*group) {
  auto ref = [=](auto& policy) -> auto& {
    return group != nullptr ? ((policy.*group).max_age) : (policy.*group_less);
  };
  return Field{key,
               [=](const StreamPolicy& p) { return absl::FormatDuration(ref(p)); },
               [=](absl::string_view k, absl::string_view text, StreamPolicy& p) {
                 KEEL_ASSIGN_OR_RETURN(ref(p), ParseDurationValue(k, text));
                 return absl::OkStatus();
               }};
}

Field CountField(absl::string_view key, uint64_t RetentionLimits::*member,
                 RetentionLimits StreamPolicy::*group, bool bytes) {
  return Field{key,
               [=](const StreamPolicy& p) { return absl::StrCat((p.*group).*member); },
               [=](absl::string_view k, absl::string_view text, StreamPolicy& p) {
                 uint64_t value = 0;
                 if (bytes) {
                   KEEL_ASSIGN_OR_RETURN(value, ParseBytes(k, text));
                 } else if (!absl::SimpleAtoi(text, &value)) {
                   return InvalidArgument(absl::StrCat("policy key '", k, "': '", text,
                                                       "' is not a non-negative integer"));
                 }
                 (p.*group).*member = value;
                 return absl::OkStatus();
               }};
}

const std::vector<Field>& Fields() {
  static const auto* fields = new std::vector<Field>{
      DurationField("max_age", nullptr, &StreamPolicy::retention),
      CountField("max_bytes", &RetentionLimits::max_bytes, &StreamPolicy::retention, true),
      CountField("max_events", &RetentionLimits::max_events, &StreamPolicy::retention, false),
      Field{"max_payload_bytes",
            [](const StreamPolicy& p) { return absl::StrCat(p.max_payload_bytes); },
            [](absl::string_view k, absl::string_view text, StreamPolicy& p) {
              KEEL_ASSIGN_OR_RETURN(p.max_payload_bytes, ParseBytes(k, text));
              if (p.max_payload_bytes < 1024 || p.max_payload_bytes > 16 * 1024 * 1024) {
                return InvalidArgument("policy key 'max_payload_bytes' must be 1KiB to 16MiB");
              }
              return absl::OkStatus();
            }},
      DurationField("dedupe_window", &StreamPolicy::dedupe_window, nullptr),
      DurationField("dead_letter.max_age", nullptr, &StreamPolicy::dead_letter_retention),
      CountField("dead_letter.max_bytes", &RetentionLimits::max_bytes,
                 &StreamPolicy::dead_letter_retention, true),
      CountField("dead_letter.max_events", &RetentionLimits::max_events,
                 &StreamPolicy::dead_letter_retention, false),
      DurationField("hot.max_age", nullptr, &StreamPolicy::hot),
      CountField("hot.max_bytes", &RetentionLimits::max_bytes, &StreamPolicy::hot, true),
      CountField("hot.max_events", &RetentionLimits::max_events, &StreamPolicy::hot, false),
      Field{"partitions", [](const StreamPolicy& p) { return absl::StrCat(p.partitions); },
            [](absl::string_view k, absl::string_view text, StreamPolicy& p) {
              if (!absl::SimpleAtoi(text, &p.partitions) || p.partitions > kMaxPartitions) {
                return InvalidArgument(absl::StrCat("policy key '", k, "': '", text,
                                                    "' is not a partition count from 0 to ",
                                                    kMaxPartitions));
              }
              return absl::OkStatus();
            }},
  };
  return *fields;
}

const Field* FindField(absl::string_view key) {
  for (const Field& field : Fields()) {
    if (field.key == key) return &field;
  }
  return nullptr;
}

}  // namespace

bool RetentionLimits::Exceeded(uint64_t count, uint64_t bytes, absl::Time oldest_time,
                               absl::Time now) const {
  if (count == 0) return false;
  if (max_events != 0 && count > max_events) return true;
  if (max_bytes != 0 && bytes > max_bytes) return true;
  return max_age != absl::ZeroDuration() && oldest_time < now - max_age;
}

absl::StatusOr<StreamPolicy> StreamPolicy::Parse(absl::string_view text) {
  StreamPolicy policy;
  absl::flat_hash_set<absl::string_view> seen;
  for (absl::string_view item : absl::StrSplit(text, absl::ByAnyChar(" \t"), absl::SkipEmpty())) {
    const size_t eq = item.find('=');
    const absl::string_view key = item.substr(0, eq);
    const Field* field = eq == absl::string_view::npos ? nullptr : FindField(key);
    if (field == nullptr) {
      return InvalidArgument(absl::StrCat("policy: '", item, "' is not key=value with a key of ",
                                          absl::StrJoin(Fields(), ", ", [](std::string* out,
                                                                          const Field& f) {
                                            absl::StrAppend(out, f.key);
                                          })));
    }
    if (!seen.insert(key).second) {
      return InvalidArgument(absl::StrCat("policy key '", key, "' is given twice"));
    }
    KEEL_RETURN_IF_ERROR(field->parse(key, item.substr(eq + 1), policy));
  }
  return policy;
}

std::string StreamPolicy::ToString() const {
  return absl::StrJoin(Fields(), " ", [this](std::string* out, const Field& field) {
    absl::StrAppend(out, field.key, "=", field.print(*this));
  });
}

std::vector<std::string> DifferingFields(const StreamPolicy& a, const StreamPolicy& b) {
  std::vector<std::string> keys;
  for (const Field& field : Fields()) {
    if (field.print(a) != field.print(b)) keys.emplace_back(field.key);
  }
  return keys;
}

absl::StatusOr<StreamDeclaration> StreamDeclaration::Parse(absl::string_view text) {
  text = absl::StripAsciiWhitespace(text);
  const size_t space = text.find_first_of(" \t");
  StreamDeclaration declaration;
  declaration.stream = std::string(text.substr(0, space));
  KEEL_RETURN_IF_ERROR(ValidateStreamName(declaration.stream));
  if (space != absl::string_view::npos) {
    KEEL_ASSIGN_OR_RETURN(declaration.policy, StreamPolicy::Parse(text.substr(space)));
  }
  return declaration;
}

}  // namespace keel
