// ValidateOptions: a Config is checked against what a factory declares, and
// a refusal names the key and, for an unknown key, every valid one.
#include "keel/core/option_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/core/errors.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel {
namespace {

using ::keel::testing::HasErrorKind;
using ::testing::AllOf;
using ::testing::HasSubstr;

const std::vector<OptionSpec>& Specs() {
  static const auto* const specs = new std::vector<OptionSpec>{
      StringOption("path", "(required)", "where"),
      UintOption("limit", 10, "how many"),
      BoolOption("verify", true, "whether"),
      DurationOption("every", absl::Seconds(2), "how often"),
      EnumOption("mode", {"fast", "safe"}, "safe", "how"),
  };
  return *specs;
}

TEST(OptionSpecTest, DeclaredOptionsOfTheirTypesAreValid) {
  EXPECT_OK(ValidateOptions("store 'x'", Specs(), Config{}));
  EXPECT_OK(ValidateOptions("store 'x'", Specs(),
                            Config{{"path", "/any thing"},
                                   {"limit", "12"},
                                   {"verify", "false"},
                                   {"every", "250ms"},
                                   {"mode", "safe"}}));
}

TEST(OptionSpecTest, UnknownOptionIsRefusedNamingItAndTheValidOnes) {
  absl::Status status = ValidateOptions("driver 'ring'", Specs(), Config{{"limt", "12"}});
  EXPECT_THAT(status, HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("driver 'ring'"), HasSubstr("unknown option 'limt'"),
                    HasSubstr("valid options: path, limit, verify, every, mode")));
}

TEST(OptionSpecTest, NoDeclaredOptionsRefusesEveryOption) {
  absl::Status status = ValidateOptions("driver 'ring'", {}, Config{{"limit", "1"}});
  EXPECT_THAT(status, HasErrorKind(ErrorKind::kInvalidArgument));
  EXPECT_THAT(status.message(), HasSubstr("valid options: (none)"));
}

TEST(OptionSpecTest, ValueNotOfTheDeclaredTypeIsRefusedNamingTheOption) {
  const struct {
    const char* key;
    const char* value;
    const char* says;
  } cases[] = {
      {"limit", "lots", "not a non-negative integer"},
      {"verify", "maybe", "not a boolean"},
      {"every", "soon", "not a duration"},
      {"mode", "reckless", "'reckless' is not one of fast, safe"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.key);
    absl::Status status = ValidateOptions("driver 'ring'", Specs(), Config{{c.key, c.value}});
    EXPECT_THAT(status, HasErrorKind(ErrorKind::kInvalidArgument));
    EXPECT_THAT(status.message(),
                AllOf(HasSubstr("driver 'ring'"), HasSubstr(std::string("option '") + c.key + "'"),
                      HasSubstr(c.says)));
  }
}

TEST(OptionSpecTest, TypeTextNamesTheTypeOrTheAllowedValues) {
  EXPECT_EQ(OptionTypeText(Specs()[0]), "string");
  EXPECT_EQ(OptionTypeText(Specs()[1]), "uint");
  EXPECT_EQ(OptionTypeText(Specs()[4]), "fast|safe");
}

// What `keel drivers` shows as each default.
TEST(OptionSpecTest, DefaultsAreWrittenAsTheyAreTyped) {
  EXPECT_EQ(Specs()[1].default_text, "10");
  EXPECT_EQ(Specs()[2].default_text, "true");
  EXPECT_EQ(Specs()[3].default_text, "2s");
  EXPECT_EQ(Specs()[4].default_text, "safe");
}

TEST(OptionSpecTest, WithFlagAddsAFlagAndItsServerDefault) {
  const OptionSpec spec = Specs()[0].WithFlag("data-dir", "./data");
  EXPECT_EQ(spec.name, "path");
  EXPECT_EQ(spec.flag, "data-dir");
  EXPECT_EQ(spec.flag_default, "./data");
  EXPECT_EQ(Specs()[0].flag, "");
}

}  // namespace
}  // namespace keel
