// OptionSpec: one option a driver or store factory declares (name, type,
// default, help), so that a host can list, document and check a Config
// before anything is created from it.
//
// A factory's declarations are the whole truth about its options: a key it
// does not declare is refused (a typo such as "max_event_per_stream" would
// otherwise be ignored in silence), and so is a value that is not of the
// declared type. Ranges (a limit of at least 1, say) stay with the factory,
// which checks them when it reads the value.
//
// Thread safety: value types and pure functions.
#ifndef KEEL_CORE_OPTION_SPEC_H_
#define KEEL_CORE_OPTION_SPEC_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/core/config.h"

namespace keel {

enum class OptionType {
  kString,
  kUint,      // A non-negative integer.
  kBool,      // true/false, yes/no, 1/0.
  kDuration,  // Such as 250ms, 2s or 5m.
  kEnum,      // One of OptionSpec::allowed.
};

struct OptionSpec {
  std::string name;
  OptionType type = OptionType::kString;
  std::vector<std::string> allowed;  // kEnum: every value taken.
  // What applies when the option is absent, for people: "100000",
  // "(required)", "none".
  std::string default_text;
  std::string help;
  // Optional: a command-line flag of its own that stands for this option
  // (`--data-dir` for the durable driver's store.path), and the value that
  // flag gives a server that is started without it, where that differs from
  // the option's own default (a daemon stores in ./data; the library has no
  // place to guess).
  std::string flag;
  std::string flag_default;

  // This spec with a flag (and the flag's server default).
  OptionSpec WithFlag(absl::string_view flag_name, absl::string_view server_default = "") const;
};

// Specs of each type, the default given as the factory holds it:
//   UintOption("max_events", limits.max_events, "newest events kept")
OptionSpec StringOption(absl::string_view name, absl::string_view default_text,
                        absl::string_view help);
OptionSpec UintOption(absl::string_view name, uint64_t default_value, absl::string_view help);
OptionSpec BoolOption(absl::string_view name, bool default_value, absl::string_view help);
OptionSpec DurationOption(absl::string_view name, absl::Duration default_value,
                          absl::string_view help);
OptionSpec EnumOption(absl::string_view name, std::vector<std::string> allowed,
                      absl::string_view default_value, absl::string_view help);

// "string", "uint", "bool", "duration", or the allowed values joined by '|'.
std::string OptionTypeText(const OptionSpec& spec);

// OK when `value` is of the declared type; else kInvalidArgument naming the
// option and what it wants.
absl::Status CheckOptionValue(const OptionSpec& spec, absl::string_view value);

// OK when every key of `config` is declared in `specs` and its value is of
// the declared type. Otherwise kInvalidArgument that starts with `owner`
// ("driver 'memory'") and names the key, and for an unknown key every valid
// one.
absl::Status ValidateOptions(absl::string_view owner, const std::vector<OptionSpec>& specs,
                             const Config& config);

// The declared names, comma-separated; "(none)" for none.
std::string OptionNames(const std::vector<OptionSpec>& specs);

// The spec named `name`, or null.
const OptionSpec* FindOption(const std::vector<OptionSpec>& specs, absl::string_view name);

}  // namespace keel

#endif  // KEEL_CORE_OPTION_SPEC_H_
