#include "keel/coldstore/cold_store.h"

#include <limits>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "keel/coldstore/builtin_cold_stores.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel {
namespace {

bool IsObjectNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == ':' || c == '=' || c == '-';
}

// Checks the components of `name`; the last may be empty when
// `trailing_slash_ok` (a prefix naming a "directory").
absl::Status CheckComponents(absl::string_view what, absl::string_view name,
                             bool trailing_slash_ok) {
  if (name.size() > kMaxObjectNameBytes) {
    return InvalidArgument(absl::StrCat(what, " is longer than ", kMaxObjectNameBytes, " bytes"));
  }
  std::vector<absl::string_view> parts = absl::StrSplit(name, '/');
  for (size_t i = 0; i < parts.size(); ++i) {
    absl::string_view part = parts[i];
    if (part.empty()) {
      if (trailing_slash_ok && i + 1 == parts.size() && i > 0) continue;
      return InvalidArgument(absl::StrCat(what, " '", name, "' has an empty component"));
    }
    if (part[0] == '.') {
      return InvalidArgument(absl::StrCat(what, " '", name, "' has a component starting with '.'"));
    }
    for (char c : part) {
      if (!IsObjectNameChar(c)) {
        return InvalidArgument(absl::StrCat(what, " '", absl::CHexEscape(name.substr(0, 64)),
                                            "' has characters outside [A-Za-z0-9._:=-/]"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateObjectName(absl::string_view name) {
  if (name.empty()) return InvalidArgument("object name is empty");
  return CheckComponents("object name", name, /*trailing_slash_ok=*/false);
}

absl::Status ValidateObjectPrefix(absl::string_view prefix) {
  if (prefix.empty()) return absl::OkStatus();
  return CheckComponents("object prefix", prefix, /*trailing_slash_ok=*/true);
}

absl::StatusOr<std::string> ColdStore::Read(absl::string_view name) {
  return ReadRange(name, 0, std::numeric_limits<uint64_t>::max());
}

absl::StatusOr<PutOutcome> CompareWithExisting(ColdStore& store, absl::string_view name,
                                               absl::string_view bytes) {
  KEEL_ASSIGN_OR_RETURN(uint64_t size, store.Size(name));
  if (size == bytes.size()) {
    KEEL_ASSIGN_OR_RETURN(std::string existing, store.Read(name));
    if (existing == bytes) return PutOutcome::kAlreadyPresent;
  }
  return MakeError(
      ErrorKind::kConflict,
      absl::StrCat("cold object '", name, "' in ", store.Describe(),
                   " already exists with other bytes (", size, " bytes; put ", bytes.size(), ")"));
}

Registry<ColdStoreFactory>& ColdStoreRegistry() {
  static Registry<ColdStoreFactory>* const registry = new Registry<ColdStoreFactory>("cold store");
  return *registry;
}

absl::StatusOr<std::unique_ptr<ColdStore>> OpenColdStore(absl::string_view name,
                                                         const Config& config) {
  LinkBuiltinColdStores();
  KEEL_ASSIGN_OR_RETURN(std::shared_ptr<ColdStoreFactory> factory, ColdStoreRegistry().Find(name));
  KEEL_RETURN_IF_ERROR(ValidateOptions(absl::StrCat("cold store '", factory->name(), "'"),
                                       factory->options(), config));
  return factory->Open(config);
}

}  // namespace keel
