#include "keel/drivers/jetstream/bus_layout.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "keel/core/errors.h"

namespace keel::jetstream {
namespace {

constexpr char kRoot[] = "keel.";

bool IsPlainTokenChar(char c) { return absl::ascii_isalnum(c) || c == '_' || c == '-'; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// The rest of `subject` after `prefix`, if it is one whole token.
std::optional<absl::string_view> LastToken(absl::string_view subject, absl::string_view prefix) {
  if (!absl::ConsumePrefix(&subject, prefix)) return std::nullopt;
  if (subject.empty() || subject.find('.') != absl::string_view::npos) return std::nullopt;
  return subject;
}

}  // namespace

std::string EncodeToken(absl::string_view name) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(name.size());
  for (char c : name) {
    if (IsPlainTokenChar(c)) {
      out.push_back(c);
    } else {
      const auto byte = static_cast<unsigned char>(c);
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xF]);
    }
  }
  return out;
}

std::optional<std::string> DecodeToken(absl::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (size_t i = 0; i < token.size(); ++i) {
    if (IsPlainTokenChar(token[i])) {
      out.push_back(token[i]);
      continue;
    }
    if (token[i] != '%' || i + 2 >= token.size()) return std::nullopt;
    const int high = HexValue(token[i + 1]);
    const int low = HexValue(token[i + 2]);
    if (high < 0 || low < 0) return std::nullopt;
    const char c = static_cast<char>(high * 16 + low);
    if (IsPlainTokenChar(c)) return std::nullopt;  // Not what EncodeToken writes.
    out.push_back(c);
    i += 2;
  }
  return out;
}

absl::StatusOr<BusLayout> BusLayout::For(absl::string_view bus, absl::string_view shared_stream) {
  if (bus.empty() || bus.size() > 32) {
    return InvalidArgument(
        absl::StrCat("jetstream: bus name must be 1 to 32 characters; got '", bus, "'"));
  }
  for (char c : bus) {
    if (!IsPlainTokenChar(c)) {
      return InvalidArgument(
          absl::StrCat("jetstream: bus name may hold only [A-Za-z0-9_-]; got '", bus, "'"));
    }
  }
  for (char c : shared_stream) {
    if (!IsPlainTokenChar(c)) {
      return InvalidArgument(absl::StrCat(
          "jetstream: stream name may hold only [A-Za-z0-9_-]; got '", shared_stream, "'"));
    }
  }
  BusLayout layout;
  layout.bus_ = std::string(bus);
  layout.shared_ = !shared_stream.empty();
  layout.stream_name_ = layout.shared_ ? std::string(shared_stream) : absl::StrCat("KEEL_", bus);
  return layout;
}

std::string BusLayout::EventSubject(absl::string_view stream) const {
  return absl::StrCat(kRoot, bus_, ".s.", EncodeToken(stream));
}

std::string BusLayout::MetadataSubject(absl::string_view key) const {
  return absl::StrCat(kRoot, bus_, ".m.", EncodeToken(key));
}

std::string BusLayout::event_filter() const { return absl::StrCat(kRoot, bus_, ".s.>"); }
std::string BusLayout::metadata_filter() const { return absl::StrCat(kRoot, bus_, ".m.>"); }
std::string BusLayout::live_filter() const { return absl::StrCat(kRoot, bus_, ".live.>"); }

std::optional<std::string> BusLayout::StreamOfSubject(absl::string_view subject) const {
  std::optional<absl::string_view> token = LastToken(subject, absl::StrCat(kRoot, bus_, ".s."));
  if (!token) token = LastToken(subject, absl::StrCat(kRoot, bus_, ".live."));
  if (!token) return std::nullopt;
  return DecodeToken(*token);
}

std::optional<std::string> BusLayout::KeyOfMetadataSubject(absl::string_view subject) const {
  std::optional<absl::string_view> token = LastToken(subject, absl::StrCat(kRoot, bus_, ".m."));
  if (!token) return std::nullopt;
  return DecodeToken(*token);
}

std::vector<std::string> BusLayout::StreamSubjects() const {
  const std::string scope = shared_ ? "*" : bus_;
  return {absl::StrCat(kRoot, scope, ".s.>"), absl::StrCat(kRoot, scope, ".m.>")};
}

std::string BusLayout::RepublishSource() const {
  return absl::StrCat(kRoot, shared_ ? "*" : bus_, ".s.>");
}

std::string BusLayout::RepublishDestination() const {
  // A shared stream republishes every bus to its own live subjects: the
  // bus token of the source subject is carried over.
  return absl::StrCat(kRoot, shared_ ? "{{wildcard(1)}}" : bus_, ".live.>");
}

}  // namespace keel::jetstream
