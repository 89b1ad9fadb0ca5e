#include "keel/tests/fuzz/wire_requests.h"

#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>

#include "keel/cmd/keel/server/request_parser.h"

namespace keel::fuzz {
namespace {

namespace http = boost::beast::http;

// Parses one request from the front of `pending`, which grows by `piece`
// bytes of `rest` whenever the parser needs more; false when the request
// is refused or incomplete.
bool ReadOne(server::RequestParser& parser, std::string& pending, absl::string_view& rest,
             size_t piece) {
  while (!parser.is_done()) {
    if (!pending.empty()) {
      boost::beast::error_code ec;
      const size_t used = parser.put(boost::asio::buffer(pending), ec);
      pending.erase(0, used);
      if (!ec) continue;
      if (ec != http::error::need_more) return false;
    }
    if (rest.empty()) return false;
    const size_t take = piece == 0 ? rest.size() : std::min(piece, rest.size());
    pending.append(rest.data(), take);
    rest.remove_prefix(take);
  }
  return true;
}

}  // namespace

std::vector<std::unique_ptr<WireRequest>> ReadWireRequests(absl::string_view bytes, size_t piece) {
  std::vector<std::unique_ptr<WireRequest>> requests;
  std::string pending;
  absl::string_view rest = bytes;
  while (!pending.empty() || !rest.empty()) {
    auto wire = std::make_unique<WireRequest>();
    server::RequestParser parser(wire->line, wire->request);
    parser.body_limit(kFuzzBodyLimit);
    parser.header_limit(kFuzzHeaderLimit);
    if (!ReadOne(parser, pending, rest, piece)) break;
    wire->keep_alive = parser.keep_alive();
    wire->target = parser.DecodeTarget();
    const bool more = wire->keep_alive && wire->target.ok();
    requests.push_back(std::move(wire));
    if (!more) break;
  }
  return requests;
}

}  // namespace keel::fuzz
