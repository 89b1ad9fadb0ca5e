#include "keel/cmd/keel/export/export_spec.h"

#include <filesystem>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "keel/coldstore/builtin_cold_stores.h"
#include "keel/coldstore/cold_store.h"
#include "keel/core/fnv.h"
#include "keel/core/option_spec.h"
#include "keel/core/status_macros.h"

namespace keel::lakehouse {
namespace {

// Group names are [A-Za-z0-9._:-]{1,255}; "export." and the hash take 24.
constexpr size_t kMaxLeafChars = 64;

bool IsNameChar(char c) {
  return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == ':' ||
         c == '-';
}

// The last component of `target` and a hash of `identity`: where the files
// go, in full (an s3 target's endpoint with its URL).
std::string DefaultName(const std::string& target, const std::string& identity) {
  std::string leaf;
  for (char c : std::filesystem::path(target).filename().string()) {
    if (leaf.size() == kMaxLeafChars) break;
    leaf.push_back(IsNameChar(c) ? c : '_');
  }
  return absl::StrFormat("%s%s%08x", leaf, leaf.empty() ? "" : "-",
                         static_cast<uint32_t>(Fnv1a64(identity)));
}

// Settings of the export itself; an s3 target's others are its store's.
bool IsExportSetting(absl::string_view key) { return key == "name" || key == "compression"; }

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

// An absolute, normalised directory without a trailing '/'.
absl::StatusOr<std::string> AbsoluteDirectory(absl::string_view directory) {
  std::error_code error;
  std::string absolute =
      std::filesystem::absolute(std::string(directory), error).lexically_normal();
  if (error) {
    return absl::InvalidArgumentError(
        absl::StrCat("export directory '", directory, "': ", error.message()));
  }
  while (absolute.size() > 1 && absl::EndsWith(absolute, "/")) absolute.pop_back();
  return absolute;
}

// s3://BUCKET[/PREFIX] without a trailing '/'; its store options are the
// other settings, with the bucket and prefix from the URL.
absl::Status SetObjectStoreTarget(absl::string_view target, const Config& settings,
                                  ExportSpec& spec) {
  absl::string_view rest = target.substr(kS3TargetScheme.size());
  while (absl::ConsumeSuffix(&rest, "/")) {
  }
  const size_t slash = rest.find('/');
  const absl::string_view bucket = rest.substr(0, slash);
  if (bucket.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("export target '", target, "' is s3://BUCKET[/PREFIX]"));
  }
  spec.target = absl::StrCat(kS3TargetScheme, rest);
  for (const auto& [key, value] : settings.values()) {
    if (key == "bucket" || key == "prefix") {
      return absl::InvalidArgumentError(
          absl::StrCat("export setting '", key,
                       "': the bucket and prefix are the target's, s3://BUCKET/PREFIX"));
    }
    if (!IsExportSetting(key)) spec.store_options.Set(key, value);
  }
  spec.store_options.Set("bucket", bucket);
  if (slash != absl::string_view::npos) spec.store_options.Set("prefix", rest.substr(slash + 1));
  // Checked here, so that a bad option is a usage error before anything runs.
  LinkBuiltinColdStores();
  KEEL_ASSIGN_OR_RETURN(std::shared_ptr<ColdStoreFactory> s3, ColdStoreRegistry().Find("s3"));
  return ValidateOptions(absl::StrCat("export target '", spec.target, "'"), s3->options(),
                         spec.store_options);
}

absl::StatusOr<ExportCompression> CompressionOf(const Config& settings) {
  const std::string compression = settings.GetString("compression", "none");
  if (compression == "none") return ExportCompression::kNone;
  if (compression == "zstd") return ExportCompression::kZstd;
  return absl::InvalidArgumentError(
      absl::StrCat("export setting compression='", compression, "': none or zstd"));
}

}  // namespace

absl::StatusOr<ExportSpec> MakeExportSpec(absl::string_view pattern, absl::string_view target,
                                          const Config& settings) {
  ExportSpec spec;
  KEEL_ASSIGN_OR_RETURN(spec.pattern, push::StreamPattern::Parse(pattern));
  if (target.empty()) return absl::InvalidArgumentError("an export needs a directory or s3:// URL");
  if (absl::StartsWith(target, kS3TargetScheme)) {
    KEEL_RETURN_IF_ERROR(SetObjectStoreTarget(target, settings, spec));
  } else {
    for (const auto& [key, value] : settings.values()) {
      if (!IsExportSetting(key)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "export setting '", key, "': a directory target takes only name and compression"));
      }
    }
    KEEL_ASSIGN_OR_RETURN(spec.target, AbsoluteDirectory(target));
  }
  KEEL_ASSIGN_OR_RETURN(spec.compression, CompressionOf(settings));
  const std::string name = settings.GetString("name", "");
  spec.name = name.empty() ? DefaultName(spec.target,
                                         absl::StrCat(spec.target, " ",
                                                      spec.store_options.GetString("endpoint", "")))
                           : name;
  KEEL_RETURN_IF_ERROR(CheckName(spec.name));
  return spec;
}

absl::StatusOr<ExportSpec> ParseExportSpec(absl::string_view text) {
  std::vector<absl::string_view> words = absl::StrSplit(text, ' ', absl::SkipWhitespace());
  if (words.size() < 2) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--export wants 'PATTERN DIR' or 'PATTERN s3://BUCKET/PREFIX', then any KEY=VALUE, got '",
        text, "'"));
  }
  Config settings;
  for (size_t i = 2; i < words.size(); ++i) {
    if (!absl::StrContains(words[i], '=') || absl::StartsWith(words[i], "=")) {
      return absl::InvalidArgumentError(absl::StrCat("--export '", text, "': '", words[i],
                                                     "' is not KEY=VALUE (after 'PATTERN DIR')"));
    }
    KEEL_RETURN_IF_ERROR(settings.SetFromAssignment(words[i]));
  }
  return MakeExportSpec(words[0], words[1], settings);
}

}  // namespace keel::lakehouse
