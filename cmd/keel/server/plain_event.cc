#include "keel/cmd/keel/server/plain_event.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "keel/cmd/keel/client/raw_json.h"
#include "keel/cmd/keel/server/event_fields.h"
#include "keel/cmd/keel/server/json_codec.h"

namespace keel::server {
namespace {

// Nesting of data taken here; deeper data goes to the general parser
// (Boost.JSON's own limit is 32).
constexpr int kMaxDepth = 16;
// Digits of a number's integer or fraction part taken here; longer numbers
// (and exponents) go to the general parser, which reads them as doubles.
constexpr size_t kMaxDigits = 15;

// Reads JSON text a token at a time. Each method returns false where the
// text is not what it takes (invalid, or merely beyond this path's limits),
// and the caller then gives the body to the general parser.
class Scanner {
 public:
  explicit Scanner(absl::string_view text) : text_(text) {}

  // Skips whitespace, then takes `c` if it is next.
  bool Take(char c) {
    SkipSpace();
    if (pos_ == text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  bool AtEnd() {
    SkipSpace();
    return pos_ == text_.size();
  }

  // A string of printable ASCII without escapes: its text is its value.
  bool PlainString(absl::string_view& value) {
    if (!Take('"')) return false;
    const size_t start = pos_;
    SkipPlainChars();
    if (pos_ == text_.size() || text_[pos_] != '"') return false;
    value = text_.substr(start, pos_++ - start);
    return true;
  }

  // Any JSON value: its text as written.
  bool Value(absl::string_view& raw) {
    SkipSpace();
    const size_t start = pos_;
    if (!SkipValue(1)) return false;
    raw = text_.substr(start, pos_ - start);
    return true;
  }

 private:
  void SkipPlainChars() {
    while (pos_ < text_.size() && kPlainJsonChars[static_cast<unsigned char>(text_[pos_])]) ++pos_;
  }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\r' || text_[pos_] == '\t')) {
      ++pos_;
    }
  }

  bool SkipValue(int depth) {
    if (pos_ == text_.size()) return false;
    switch (text_[pos_]) {
      case '"':
        return SkipString();
      case '{':
        return SkipContainer('}', depth);
      case '[':
        return SkipContainer(']', depth);
      case 't':
        return SkipWord("true");
      case 'f':
        return SkipWord("false");
      case 'n':
        return SkipWord("null");
      default:
        return SkipNumber();
    }
  }

  // An object or array: its members or elements, then `close`.
  bool SkipContainer(char close, int depth) {
    if (depth > kMaxDepth) return false;
    ++pos_;
    if (Take(close)) return true;
    do {
      SkipSpace();
      if (close == '}' && !(SkipString() && Take(':'))) return false;
      SkipSpace();
      if (!SkipValue(depth + 1)) return false;
    } while (Take(','));
    return Take(close);
  }

  // A string of printable ASCII and valid escapes (the general parser
  // checks UTF-8, and surrogate pairs in \u escapes).
  bool SkipString() {
    if (pos_ == text_.size() || text_[pos_] != '"') return false;
    ++pos_;
    while (true) {
      SkipPlainChars();
      if (pos_ == text_.size()) return false;
      if (text_[pos_] == '"') {
        ++pos_;
        return true;
      }
      if (text_[pos_] != '\\' || !SkipEscape()) return false;
    }
  }

  // The escape whose backslash is at pos_, leaving pos_ past it.
  bool SkipEscape() {
    if (++pos_ == text_.size()) return false;
    switch (text_[pos_++]) {
      case '"':
      case '\\':
      case '/':
      case 'b':
      case 'f':
      case 'n':
      case 'r':
      case 't':
        return true;
      case 'u': {
        if (text_.size() - pos_ < 4) return false;
        for (size_t i = 0; i < 4; ++i) {
          if (!absl::ascii_isxdigit(static_cast<unsigned char>(text_[pos_ + i]))) return false;
        }
        const char first = absl::ascii_tolower(static_cast<unsigned char>(text_[pos_]));
        const char second = absl::ascii_tolower(static_cast<unsigned char>(text_[pos_ + 1]));
        if (first == 'd' && second >= '8') return false;  // A surrogate.
        pos_ += 4;
        return true;
      }
      default:
        return false;
    }
  }

  bool SkipWord(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)? with at most kMaxDigits in each part.
  bool SkipNumber() {
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    const size_t whole = SkipDigits();
    if (whole == 0 || whole > kMaxDigits || (whole > 1 && text_[pos_ - whole] == '0')) {
      return false;
    }
    if (pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      const size_t fraction = SkipDigits();
      if (fraction == 0 || fraction > kMaxDigits) return false;
    }
    return pos_ == text_.size() || (text_[pos_] != 'e' && text_[pos_] != 'E');
  }

  size_t SkipDigits() {
    const size_t start = pos_;
    while (pos_ < text_.size() && absl::ascii_isdigit(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
    return pos_ - start;
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

// An object of plain strings, each name once.
bool TakeAttributes(Scanner& scanner, std::map<std::string, std::string>& attributes) {
  if (!scanner.Take('{')) return false;
  if (scanner.Take('}')) return true;
  do {
    absl::string_view name;
    absl::string_view value;
    if (!scanner.PlainString(name) || !scanner.Take(':') || !scanner.PlainString(value)) {
      return false;
    }
    if (!attributes.emplace(std::string(name), std::string(value)).second) return false;
  } while (scanner.Take(','));
  return scanner.Take('}');
}

// A string member's value, into the event (or its partition key); false for
// a field that is not one this path takes as a plain string.
bool TakeString(EventField field, absl::string_view value, Event& event,
                std::string& partition_key) {
  switch (field) {
    case EventField::kType:
      event.type = std::string(value);
      return true;
    case EventField::kTenant:
      event.tenant = std::string(value);
      return true;
    case EventField::kId:
      event.id = std::string(value);
      return true;
    case EventField::kIdempotencyKey:
      if (!value.empty()) event.idempotency_key = std::string(value);
      return true;
    case EventField::kPartitionKey:
      partition_key = std::string(value);
      return true;
    default:  // dataBase64, contentType, expectedLastSequence.
      return false;
  }
}

// Member `field` of the event, whose name the scanner has just taken;
// false for a field this path leaves to the general parser.
bool TakeMember(EventField field, Scanner& scanner, Event& event, std::string& partition_key,
                std::optional<absl::string_view>& data) {
  absl::string_view value;
  switch (field) {
    case EventField::kAttributes:
      return TakeAttributes(scanner, event.attributes);
    case EventField::kData:
      if (!scanner.Value(value)) return false;
      data = value;
      return true;
    default:
      return scanner.PlainString(value) && TakeString(field, value, event, partition_key);
  }
}

}  // namespace

std::optional<PublishBody> ParsePlainEvent(absl::string_view text) {
  Scanner scanner(text);
  if (!scanner.Take('{')) return std::nullopt;
  Event event;
  std::string partition_key;
  std::optional<absl::string_view> data;
  if (!scanner.Take('}')) {
    uint32_t seen = 0;
    do {
      absl::string_view name;
      if (!scanner.PlainString(name) || !scanner.Take(':')) return std::nullopt;
      const std::optional<EventField> field = EventFieldNamed(name);
      if (!field) return std::nullopt;
      const uint32_t bit = 1u << static_cast<int>(*field);
      if ((seen & bit) != 0) return std::nullopt;  // A repeated name.
      seen |= bit;
      if (!TakeMember(*field, scanner, event, partition_key, data)) return std::nullopt;
    } while (scanner.Take(','));
    if (!scanner.Take('}')) return std::nullopt;
  }
  if (!scanner.AtEnd()) return std::nullopt;
  // As the general parser: the data as written, compacted.
  event.payload = data ? client::RawCompact(*data) : "null";
  event.content_type = kJsonContentType;
  PublishBody body;
  body.events.push_back(std::move(event));
  body.partition_keys.push_back(std::move(partition_key));
  return body;
}

}  // namespace keel::server
