// The daemon's retention trimmer: a timer on the server's Asio executor that
// asks the bus for retention work and runs it on the blocking pool.
//
// Each tick first asks EventBus::NeedsTrim (no I/O), so an idle daemon does
// no store work; while something is over a bound it calls Trim(budget)
// back to back (each call is bounded, and a trim rides the same commit queue
// as publishes, so constant traffic cannot starve it) and then returns to
// ticking. What it removed goes to the metrics. It stops when the server
// starts draining.
//
// Thread safety: internal; started once per server.
#ifndef KEEL_CMD_KEEL_SERVER_TRIMMER_H_
#define KEEL_CMD_KEEL_SERVER_TRIMMER_H_

#include <memory>

#include <boost/asio/io_context.hpp>

#include "keel/cmd/keel/server/server_state.h"

namespace keel::server {

void StartTrimmer(boost::asio::io_context& ioc, std::shared_ptr<ServerState> state);

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_TRIMMER_H_
