#include "keel/core/option_spec.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "keel/core/errors.h"

namespace keel {

namespace {

OptionSpec Spec(absl::string_view name, OptionType type, std::string default_text,
                absl::string_view help) {
  OptionSpec spec;
  spec.name = std::string(name);
  spec.type = type;
  spec.default_text = std::move(default_text);
  spec.help = std::string(help);
  return spec;
}

}  // namespace

OptionSpec OptionSpec::WithFlag(absl::string_view flag_name,
                                absl::string_view server_default) const {
  OptionSpec spec = *this;
  spec.flag = std::string(flag_name);
  spec.flag_default = std::string(server_default);
  return spec;
}

OptionSpec StringOption(absl::string_view name, absl::string_view default_text,
                        absl::string_view help) {
  return Spec(name, OptionType::kString, std::string(default_text), help);
}

OptionSpec UintOption(absl::string_view name, uint64_t default_value, absl::string_view help) {
  return Spec(name, OptionType::kUint, absl::StrCat(default_value), help);
}

OptionSpec BoolOption(absl::string_view name, bool default_value, absl::string_view help) {
  return Spec(name, OptionType::kBool, default_value ? "true" : "false", help);
}

OptionSpec DurationOption(absl::string_view name, absl::Duration default_value,
                          absl::string_view help) {
  return Spec(name, OptionType::kDuration, absl::FormatDuration(default_value), help);
}

OptionSpec EnumOption(absl::string_view name, std::vector<std::string> allowed,
                      absl::string_view default_value, absl::string_view help) {
  OptionSpec spec = Spec(name, OptionType::kEnum, std::string(default_value), help);
  spec.allowed = std::move(allowed);
  return spec;
}

std::string OptionTypeText(const OptionSpec& spec) {
  switch (spec.type) {
    case OptionType::kString:
      return "string";
    case OptionType::kUint:
      return "uint";
    case OptionType::kBool:
      return "bool";
    case OptionType::kDuration:
      return "duration";
    case OptionType::kEnum:
      return absl::StrJoin(spec.allowed, "|");
  }
  return "string";
}

absl::Status CheckOptionValue(const OptionSpec& spec, absl::string_view value) {
  // Config's typed getters hold the one definition of each type's syntax
  // (and the wording of their errors), which the factories read with.
  const Config one{{spec.name, std::string(value)}};
  switch (spec.type) {
    case OptionType::kString:
      return absl::OkStatus();
    case OptionType::kUint:
      return one.GetUint(spec.name, 0).status();
    case OptionType::kBool:
      return one.GetBool(spec.name, false).status();
    case OptionType::kDuration:
      return one.GetDuration(spec.name, absl::ZeroDuration()).status();
    case OptionType::kEnum:
      if (std::find(spec.allowed.begin(), spec.allowed.end(), value) != spec.allowed.end()) {
        return absl::OkStatus();
      }
      return InvalidArgument(absl::StrCat("option '", spec.name, "': '", value, "' is not one of ",
                                          absl::StrJoin(spec.allowed, ", ")));
  }
  return absl::OkStatus();
}

absl::Status ValidateOptions(absl::string_view owner, const std::vector<OptionSpec>& specs,
                             const Config& config) {
  for (const auto& [key, value] : config.values()) {
    const OptionSpec* spec = FindOption(specs, key);
    if (spec == nullptr) {
      return InvalidArgument(
          absl::StrCat(owner, ": unknown option '", key, "'; valid options: ", OptionNames(specs)));
    }
    if (absl::Status valid = CheckOptionValue(*spec, value); !valid.ok()) {
      return InvalidArgument(absl::StrCat(owner, ": ", valid.message()));
    }
  }
  return absl::OkStatus();
}

std::string OptionNames(const std::vector<OptionSpec>& specs) {
  if (specs.empty()) return "(none)";
  return absl::StrJoin(specs, ", ",
                       [](std::string* out, const OptionSpec& spec) { out->append(spec.name); });
}

const OptionSpec* FindOption(const std::vector<OptionSpec>& specs, absl::string_view name) {
  for (const OptionSpec& spec : specs) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

}  // namespace keel
