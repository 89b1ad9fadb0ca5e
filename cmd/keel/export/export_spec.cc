#include "keel/cmd/keel/export/export_spec.h"

#include <filesystem>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "keel/core/fnv.h"
#include "keel/core/status_macros.h"

namespace keel::lakehouse {
namespace {

// Group names are [A-Za-z0-9._:-]{1,255}; "export." and the hash take 24.
constexpr size_t kMaxLeafChars = 64;

bool IsNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == ':' ||
         c == '-';
}

std::string DefaultName(const std::string& absolute) {
  std::string leaf;
  for (char c : std::filesystem::path(absolute).filename().string()) {
    if (leaf.size() == kMaxLeafChars) break;
    leaf.push_back(IsNameChar(c) ? c : '_');
  }
  return absl::StrFormat("%s%s%08x", leaf, leaf.empty() ? "" : "-",
                         static_cast<uint32_t>(Fnv1a64(absolute)));
}

absl::Status CheckName(absl::string_view name) {
  if (name.empty() || name.size() > 200) {
    return absl::InvalidArgumentError("an export name has 1 to 200 characters");
  }
  for (char c : name) {
    if (!IsNameChar(c)) {
      return absl::InvalidArgumentError(
          absl::StrCat("export name '", name, "' may hold only letters, digits and . _ : -"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ExportSpec> MakeExportSpec(absl::string_view pattern, absl::string_view directory,
                                          absl::string_view name) {
  ExportSpec spec;
  KEEL_ASSIGN_OR_RETURN(spec.pattern, push::StreamPattern::Parse(pattern));
  if (directory.empty()) return absl::InvalidArgumentError("an export needs a directory");
  std::error_code error;
  spec.directory = std::filesystem::absolute(std::string(directory), error).lexically_normal();
  if (error) {
    return absl::InvalidArgumentError(
        absl::StrCat("export directory '", directory, "': ", error.message()));
  }
  while (spec.directory.size() > 1 && absl::EndsWith(spec.directory, "/"))
    spec.directory.pop_back();
  spec.name = name.empty() ? DefaultName(spec.directory) : std::string(name);
  KEEL_RETURN_IF_ERROR(CheckName(spec.name));
  return spec;
}

absl::StatusOr<ExportSpec> ParseExportSpec(absl::string_view text) {
  std::vector<absl::string_view> words = absl::StrSplit(text, ' ', absl::SkipWhitespace());
  absl::string_view name;
  if (words.size() == 3 && absl::ConsumePrefix(&words[2], "name=")) name = words[2];
  if (words.size() < 2 || words.size() > 3 || (words.size() == 3 && name.empty())) {
    return absl::InvalidArgumentError(
        absl::StrCat("--export wants 'PATTERN DIR' or 'PATTERN DIR name=NAME', got '", text, "'"));
  }
  return MakeExportSpec(words[0], words[1], name);
}

}  // namespace keel::lakehouse
