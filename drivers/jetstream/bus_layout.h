// BusLayout: where a Keel bus lives in JetStream — the JetStream stream
// that holds it and the subjects of its streams, metadata and live feed.
//
// A bus is one subject tree, `keel.<bus>.`:
//
//   keel.<bus>.s.<stream>   the records of Keel stream <stream>
//   keel.<bus>.m.<key>      the bus's metadata records (declarations, groups)
//   keel.<bus>.live.<stream> the server's republication of every stored
//                           record of <stream>, which the live feed follows
//
// <stream> and <key> are one subject token each (EncodeToken): Keel names
// may hold '.', which separates subject tokens.
//
// By default a bus has a JetStream stream of its own, KEEL_<bus>, whose
// subjects are exactly the bus's. Several buses may instead share a named
// JetStream stream (`stream` option): its subjects then take every bus
// (`keel.*.s.>`), so one raft group serves them all.
//
// Thread safety: a value type.
#ifndef KEEL_DRIVERS_JETSTREAM_BUS_LAYOUT_H_
#define KEEL_DRIVERS_JETSTREAM_BUS_LAYOUT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace keel::jetstream {

// A Keel name as one subject token: [A-Za-z0-9_-] stay, every other byte
// becomes %XX (upper-case hex).
std::string EncodeToken(absl::string_view name);
// The name back; nullopt for a token EncodeToken does not produce.
std::optional<std::string> DecodeToken(absl::string_view token);

class BusLayout {
 public:
  // kInvalidArgument unless `bus` is 1..32 of [A-Za-z0-9_-] and
  // `shared_stream` is empty or a valid JetStream stream name.
  static absl::StatusOr<BusLayout> For(absl::string_view bus, absl::string_view shared_stream);

  const std::string& bus() const { return bus_; }
  // The JetStream stream that holds the bus.
  const std::string& stream_name() const { return stream_name_; }
  bool shared() const { return shared_; }

  std::string EventSubject(absl::string_view stream) const;
  std::string MetadataSubject(absl::string_view key) const;
  // Every event subject of the bus: keel.<bus>.s.>
  std::string event_filter() const;
  std::string metadata_filter() const;
  // What the live feed subscribes to: keel.<bus>.live.>
  std::string live_filter() const;
  // The Keel stream of an event or live subject of this bus.
  std::optional<std::string> StreamOfSubject(absl::string_view subject) const;
  std::optional<std::string> KeyOfMetadataSubject(absl::string_view subject) const;

  // The JetStream stream's subjects and republication, as Keel creates them
  // and as an existing stream must have them.
  std::vector<std::string> StreamSubjects() const;
  std::string RepublishSource() const;
  std::string RepublishDestination() const;

 private:
  BusLayout() = default;
  std::string bus_;
  std::string stream_name_;
  bool shared_ = false;
};

}  // namespace keel::jetstream

#endif  // KEEL_DRIVERS_JETSTREAM_BUS_LAYOUT_H_
