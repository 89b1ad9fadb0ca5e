// RateLimitKey: the client a request is counted under by `--rate-limit`.
//
// An IPv4 address is a client of its own. An IPv6 client is its /64
// network: one host commonly holds a whole /64, and counting its addresses
// apart would give it as many buckets (and bursts) as it cares to use. An
// IPv4-mapped IPv6 address (::ffff:a.b.c.d) counts as its IPv4 address.
//
// Thread safety: a pure function.
#ifndef KEEL_CMD_KEEL_SERVER_CLIENT_KEY_H_
#define KEEL_CMD_KEEL_SERVER_CLIENT_KEY_H_

#include <boost/asio/ip/address.hpp>
#include <string>

namespace keel::server {

std::string RateLimitKey(const boost::asio::ip::address& address);

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_CLIENT_KEY_H_
