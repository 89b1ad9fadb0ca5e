// JetStreamApi: the JetStream requests the driver makes on one JetStream
// stream, spoken directly ($JS.API JSON over NatsClient) because the
// driver needs requests the C client has no call for (a stream's next
// message on a subject, answered by the stream leader).
//
// Reads go to the stream leader ($JS.API.STREAM.MSG.GET), so a read after an
// acknowledged publish sees it. Errors: kUnavailable when the server could
// not be asked or answered that it cannot serve (no leader, no quorum),
// kCancelled once the connection closed, kUnknown for other API errors.
//
// Thread safety: all methods are safe to call concurrently.
#ifndef KEEL_DRIVERS_JETSTREAM_JETSTREAM_API_H_
#define KEEL_DRIVERS_JETSTREAM_JETSTREAM_API_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/drivers/jetstream/nats_client.h"

namespace keel::jetstream {

// A message as the stream stores it.
struct StoredMessage {
  std::string subject;
  uint64_t sequence = 0;  // The JetStream stream sequence.
  NatsHeaders headers;
  std::string data;
};

// An error the JetStream API answered with.
struct ApiError {
  int code = 0;      // HTTP-like: 400, 404, 503.
  int err_code = 0;  // JetStream's own, e.g. 10071 (wrong last sequence).
  std::string description;
};

inline constexpr int kErrNoMessageFound = 10037;
inline constexpr int kErrStreamNotFound = 10059;
inline constexpr int kErrWrongLastSequence = 10071;
inline constexpr int kErrMessageTooLarge = 10054;
inline constexpr int kErrStoreFailed = 10077;

// How a publish ended.
struct PublishReply {
  enum class Kind {
    kStored,     // Stored at `sequence`.
    kDuplicate,  // Refused: a message with the same Nats-Msg-Id is stored at `sequence`.
    kRejected,   // Refused for `error` (nothing stored by this attempt).
    kUnknown,    // No answer: stored or not, nobody can say yet (`problem`).
  };
  Kind kind = Kind::kUnknown;
  uint64_t sequence = 0;
  ApiError error;
  std::string problem;
  // kUnknown: the attempt may have reached a leader (it timed out) rather
  // than been refused before anything was proposed.
  bool may_have_reached = false;
  bool connection_closed = false;  // kUnknown because this process closed the connection.
};

// What the stream's configuration and state say (STREAM.INFO).
struct StreamSnapshot {
  std::string created;  // As the server wrote it; equal on every replica.
  std::string description;
  std::vector<std::string> subjects;
  std::string republish_source;
  std::string republish_destination;
  bool allow_rollup = false;
  int64_t replicas = 1;
  uint64_t last_sequence = 0;
  // With a subjects filter: the stream's subjects that match it.
  std::vector<std::string> matching_subjects;
};

// The JetStream stream the driver creates.
struct StreamSpec {
  std::string name;
  std::string description;
  std::vector<std::string> subjects;
  std::string republish_source;
  std::string republish_destination;
  int64_t replicas = 1;
  int64_t max_bytes = -1;
  absl::Duration duplicate_window = absl::Minutes(2);
};

class JetStreamApi {
 public:
  JetStreamApi(NatsClient& client, std::string stream, absl::Duration timeout)
      : client_(client), stream_(std::move(stream)), timeout_(timeout) {}

  const std::string& stream() const { return stream_; }
  absl::Duration timeout() const { return timeout_; }

  // nullopt when no message matches.
  absl::StatusOr<std::optional<StoredMessage>> LastBySubject(absl::string_view subject);
  // The first message at or after `from` whose subject matches `filter`
  // (wildcards allowed).
  absl::StatusOr<std::optional<StoredMessage>> NextBySubject(absl::string_view filter,
                                                             uint64_t from);
  absl::StatusOr<std::optional<StoredMessage>> BySequence(uint64_t sequence);

  // nullopt when the stream does not exist. `subjects_filter`, when not
  // empty, lists the matching subjects.
  absl::StatusOr<std::optional<StreamSnapshot>> Info(absl::string_view subjects_filter = "");
  // Creates the stream; kAlreadyExists when a stream of that name exists.
  absl::Status Create(const StreamSpec& spec);
  // Removes the messages of `subject` below `below`.
  absl::Status Purge(absl::string_view subject, uint64_t below);

  PublishReply Publish(absl::string_view subject, const NatsHeaders& headers,
                       absl::string_view data, absl::Duration timeout);

 private:
  // The reply's JSON text, or the status of a request that got none.
  absl::StatusOr<std::string> Call(absl::string_view subject, absl::string_view body);
  absl::StatusOr<std::optional<StoredMessage>> GetMessage(absl::string_view request);

  NatsClient& client_;
  const std::string stream_;
  const absl::Duration timeout_;
};

// The status for an API error (kUnavailable for the errors that mean "no
// leader or quorum now").
absl::Status ApiErrorStatus(const ApiError& error, absl::string_view what);

}  // namespace keel::jetstream

#endif  // KEEL_DRIVERS_JETSTREAM_JETSTREAM_API_H_
