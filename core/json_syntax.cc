#include "keel/core/json_syntax.h"

#include <boost/json/basic_parser_impl.hpp>

namespace keel {
namespace {

// A basic_parser handler that accepts every event and keeps nothing: the
// parser alone checks the syntax, the UTF-8 and the depth.
struct Discard {
  using ec = boost::json::error_code;
  using sv = boost::json::string_view;
  static constexpr size_t max_object_size = static_cast<size_t>(-1);
  static constexpr size_t max_array_size = static_cast<size_t>(-1);
  static constexpr size_t max_key_size = static_cast<size_t>(-1);
  static constexpr size_t max_string_size = static_cast<size_t>(-1);

  bool on_document_begin(ec&) { return true; }
  bool on_document_end(ec&) { return true; }
  bool on_object_begin(ec&) { return true; }
  bool on_object_end(size_t, ec&) { return true; }
  bool on_array_begin(ec&) { return true; }
  bool on_array_end(size_t, ec&) { return true; }
  bool on_key_part(sv, size_t, ec&) { return true; }
  bool on_key(sv, size_t, ec&) { return true; }
  bool on_string_part(sv, size_t, ec&) { return true; }
  bool on_string(sv, size_t, ec&) { return true; }
  bool on_number_part(sv, ec&) { return true; }
  bool on_int64(int64_t, sv, ec&) { return true; }
  bool on_uint64(uint64_t, sv, ec&) { return true; }
  bool on_double(double, sv, ec&) { return true; }
  bool on_bool(bool, ec&) { return true; }
  bool on_null(ec&) { return true; }
  bool on_comment_part(sv, ec&) { return true; }
  bool on_comment(sv, ec&) { return true; }
};

}  // namespace

bool IsJsonText(absl::string_view text, std::string* error) {
  boost::json::parse_options options;
  options.max_depth = kMaxJsonDepth;
  boost::json::basic_parser<Discard> parser(options);
  boost::json::error_code ec;
  const size_t used = parser.write_some(false, text.data(), text.size(), ec);
  if (!ec && used != text.size()) ec = boost::json::error::extra_data;
  if (ec && error != nullptr) *error = ec.message();
  return !ec;
}

}  // namespace keel
