// ConnectionSlots: counts the open connections of a kind (SSE streams) in
// all and per key (a bearer token, or a client address), for
// `--max-sse-connections` and `--max-sse-per-token`.
//
// Acquire takes a slot, or refuses when the total or the key's count is at
// its limit; the slot is given back when the ConnectionSlot is destroyed
// (the connection ended). Keys with no open connection are forgotten, so
// memory follows the open connections.
//
// Thread safety: Acquire and slot destruction may run concurrently.
#ifndef KEEL_CMD_KEEL_SERVER_CONNECTION_SLOTS_H_
#define KEEL_CMD_KEEL_SERVER_CONNECTION_SLOTS_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "keel/core/mutex.h"

namespace keel::server {

class ConnectionSlots;

// One open connection's slot; gives it back when destroyed.
class ConnectionSlot {
 public:
  ConnectionSlot(ConnectionSlots& slots, std::string key);
  ~ConnectionSlot();
  ConnectionSlot(const ConnectionSlot&) = delete;
  ConnectionSlot& operator=(const ConnectionSlot&) = delete;

 private:
  ConnectionSlots& slots_;
  const std::string key_;
};

class ConnectionSlots {
 public:
  // 0 for no limit.
  ConnectionSlots(size_t total_limit, size_t per_key_limit);

  bool limits() const { return total_limit_ > 0 || per_key_limit_ > 0; }
  size_t total_limit() const { return total_limit_; }
  size_t per_key_limit() const { return per_key_limit_; }

  enum class Full { kNone, kTotal, kKey };
  // A slot for `key`, or null with `*full` saying which limit was reached.
  // The ConnectionSlots must outlive the slot.
  std::unique_ptr<ConnectionSlot> Acquire(absl::string_view key, Full* full);

  size_t open() const;

 private:
  friend class ConnectionSlot;
  void Release(const std::string& key);

  const size_t total_limit_;
  const size_t per_key_limit_;
  mutable Mutex mu_;
  size_t open_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, size_t> per_key_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel::server

#endif  // KEEL_CMD_KEEL_SERVER_CONNECTION_SLOTS_H_
