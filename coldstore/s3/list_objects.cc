#include "keel/coldstore/s3/list_objects.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace keel::s3 {
namespace {

// The text of the first <tag>...</tag> in `xml` at or after `from`;
// `found` false when there is none. `end` receives the position after it.
std::string ElementText(absl::string_view xml, absl::string_view tag, size_t from, bool& found,
                        size_t* end = nullptr) {
  const std::string open = absl::StrCat("<", tag, ">");
  const std::string close = absl::StrCat("</", tag, ">");
  found = false;
  const size_t start = xml.find(open, from);
  if (start == absl::string_view::npos) return "";
  const size_t text = start + open.size();
  const size_t stop = xml.find(close, text);
  if (stop == absl::string_view::npos) return "";
  found = true;
  if (end != nullptr) *end = stop + close.size();
  return absl::StrReplaceAll(
      xml.substr(text, stop - text),
      {{"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&amp;", "&"}});
}

absl::Status Malformed(absl::string_view why) {
  return absl::DataLossError(absl::StrCat("s3: malformed ListObjectsV2 answer: ", why));
}

}  // namespace

absl::StatusOr<ListPage> ParseListObjectsV2(absl::string_view xml) {
  if (xml.find("<ListBucketResult") == absl::string_view::npos) {
    return Malformed(absl::StrCat("no ListBucketResult in '", xml.substr(0, 200), "'"));
  }
  ListPage page;
  size_t position = 0;
  for (;;) {
    bool found = false;
    size_t end = 0;
    const std::string contents = ElementText(xml, "Contents", position, found, &end);
    if (!found) break;
    position = end;
    bool has_key = false;
    bool has_size = false;
    ObjectInfo object;
    object.name = ElementText(contents, "Key", 0, has_key);
    const std::string size = ElementText(contents, "Size", 0, has_size);
    if (!has_key || !has_size || !absl::SimpleAtoi(size, &object.size)) {
      return Malformed(absl::StrCat("a Contents without Key or Size: '", contents, "'"));
    }
    page.objects.push_back(std::move(object));
  }
  bool found = false;
  page.truncated = ElementText(xml, "IsTruncated", 0, found) == "true";
  page.next_continuation_token = ElementText(xml, "NextContinuationToken", 0, found);
  if (page.truncated && page.next_continuation_token.empty()) {
    return Malformed("truncated without a NextContinuationToken");
  }
  return page;
}

std::string DescribeErrorBody(absl::string_view body) {
  bool has_code = false;
  bool has_message = false;
  const std::string code = ElementText(body, "Code", 0, has_code);
  const std::string message = ElementText(body, "Message", 0, has_message);
  if (has_code) return has_message ? absl::StrCat(code, ": ", message) : code;
  return std::string(body.substr(0, 200));
}

}  // namespace keel::s3
