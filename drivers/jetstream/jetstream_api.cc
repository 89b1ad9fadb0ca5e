#include "keel/drivers/jetstream/jetstream_api.h"

#include <boost/json.hpp>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel::jetstream {
namespace {

namespace json = boost::json;

constexpr char kApi[] = "$JS.API.";

// JetStream's codes for "cannot serve now": no stream leader, no quorum,
// JetStream (temporarily) unavailable.
bool MeansUnavailable(const ApiError& error) {
  return error.code == 503 || error.err_code == 10008 || error.err_code == 10009 ||
         error.err_code == 10076 || error.err_code == 10023;
}

absl::StatusOr<json::object> ParseObject(absl::string_view text, absl::string_view what) {
  boost::system::error_code ec;
  json::value value = json::parse(json::string_view(text.data(), text.size()), ec);
  if (ec || !value.is_object()) {
    return absl::UnknownError(absl::StrCat("jetstream: ", what,
                                           ": the server's answer is not a "
                                           "JSON object: ",
                                           text.substr(0, 200)));
  }
  return std::move(value.as_object());
}

std::string StringOf(const json::object& object, absl::string_view key) {
  const json::value* value = object.if_contains(json::string_view(key.data(), key.size()));
  if (value == nullptr || !value->is_string()) return "";
  return std::string(value->as_string().c_str(), value->as_string().size());
}

uint64_t UintOf(const json::object& object, absl::string_view key) {
  const json::value* value = object.if_contains(json::string_view(key.data(), key.size()));
  if (value == nullptr) return 0;
  if (value->is_uint64()) return value->as_uint64();
  if (value->is_int64())
    return value->as_int64() < 0 ? 0 : static_cast<uint64_t>(value->as_int64());
  return 0;
}

int64_t IntOf(const json::object& object, absl::string_view key) {
  const json::value* value = object.if_contains(json::string_view(key.data(), key.size()));
  if (value == nullptr) return 0;
  if (value->is_int64()) return value->as_int64();
  if (value->is_uint64()) return static_cast<int64_t>(value->as_uint64());
  return 0;
}

const json::object* ObjectOf(const json::object& object, absl::string_view key) {
  const json::value* value = object.if_contains(json::string_view(key.data(), key.size()));
  return value != nullptr && value->is_object() ? &value->as_object() : nullptr;
}

std::optional<ApiError> ErrorOf(const json::object& reply) {
  const json::object* error = ObjectOf(reply, "error");
  if (error == nullptr) return std::nullopt;
  return ApiError{static_cast<int>(IntOf(*error, "code")),
                  static_cast<int>(IntOf(*error, "err_code")), StringOf(*error, "description")};
}

absl::Status NoReplyStatus(const NatsReply& reply, absl::string_view what) {
  const std::string text = absl::StrCat("jetstream: ", what, ": ", reply.problem);
  if (reply.kind == NatsReply::Kind::kClosed) return Closed(text);
  return Unavailable(text);
}

}  // namespace

absl::Status ApiErrorStatus(const ApiError& error, absl::string_view what) {
  const std::string text =
      absl::StrCat("jetstream: ", what, ": ", error.description, " (", error.err_code, ")");
  if (MeansUnavailable(error)) return Unavailable(text);
  return absl::UnknownError(text);
}

absl::StatusOr<std::string> JetStreamApi::Call(absl::string_view subject, absl::string_view body) {
  NatsReply reply = client_.Request(subject, {}, body, timeout_);
  if (reply.kind != NatsReply::Kind::kReplied) return NoReplyStatus(reply, subject);
  return std::move(reply.data);
}

absl::StatusOr<std::optional<StoredMessage>> JetStreamApi::GetMessage(absl::string_view request) {
  KEEL_ASSIGN_OR_RETURN(std::string text,
                        Call(absl::StrCat(kApi, "STREAM.MSG.GET.", stream_), request));
  KEEL_ASSIGN_OR_RETURN(json::object reply, ParseObject(text, "get message"));
  if (std::optional<ApiError> error = ErrorOf(reply)) {
    if (error->err_code == kErrNoMessageFound) return std::nullopt;
    return ApiErrorStatus(*error, absl::StrCat("get message ", request));
  }
  const json::object* message = ObjectOf(reply, "message");
  if (message == nullptr) {
    return absl::UnknownError("jetstream: get message: the answer holds no message");
  }
  StoredMessage out;
  out.subject = StringOf(*message, "subject");
  out.sequence = UintOf(*message, "seq");
  std::string headers;
  if (!absl::Base64Unescape(StringOf(*message, "hdrs"), &headers) ||
      !absl::Base64Unescape(StringOf(*message, "data"), &out.data)) {
    return absl::DataLossError(absl::StrCat("jetstream: message ", out.sequence, " of stream ",
                                            stream_, " is not valid base64"));
  }
  KEEL_ASSIGN_OR_RETURN(out.headers, ParseHeaderBlock(headers));
  return out;
}

absl::StatusOr<std::optional<StoredMessage>> JetStreamApi::LastBySubject(
    absl::string_view subject) {
  json::object request;
  request["last_by_subj"] = json::string_view(subject.data(), subject.size());
  return GetMessage(json::serialize(request));
}

absl::StatusOr<std::optional<StoredMessage>> JetStreamApi::NextBySubject(absl::string_view filter,
                                                                         uint64_t from) {
  json::object request;
  request["seq"] = from;
  request["next_by_subj"] = json::string_view(filter.data(), filter.size());
  return GetMessage(json::serialize(request));
}

absl::StatusOr<std::optional<StoredMessage>> JetStreamApi::BySequence(uint64_t sequence) {
  json::object request;
  request["seq"] = sequence;
  return GetMessage(json::serialize(request));
}

absl::StatusOr<std::optional<StreamSnapshot>> JetStreamApi::Info(
    absl::string_view subjects_filter) {
  json::object request;
  if (!subjects_filter.empty()) {
    request["subjects_filter"] = json::string_view(subjects_filter.data(), subjects_filter.size());
  }
  KEEL_ASSIGN_OR_RETURN(std::string text, Call(absl::StrCat(kApi, "STREAM.INFO.", stream_),
                                               json::serialize(request)));
  KEEL_ASSIGN_OR_RETURN(json::object reply, ParseObject(text, "stream info"));
  if (std::optional<ApiError> error = ErrorOf(reply)) {
    if (error->err_code == kErrStreamNotFound) return std::nullopt;
    return ApiErrorStatus(*error, absl::StrCat("stream info of ", stream_));
  }
  StreamSnapshot snapshot;
  snapshot.created = StringOf(reply, "created");
  if (const json::object* config = ObjectOf(reply, "config")) {
    snapshot.description = StringOf(*config, "description");
    snapshot.replicas = IntOf(*config, "num_replicas");
    if (const json::value* rollup = config->if_contains("allow_rollup_hdrs");
        rollup != nullptr && rollup->is_bool()) {
      snapshot.allow_rollup = rollup->as_bool();
    }
    if (const json::value* subjects = config->if_contains("subjects");
        subjects != nullptr && subjects->is_array()) {
      for (const json::value& subject : subjects->as_array()) {
        if (subject.is_string()) snapshot.subjects.emplace_back(subject.as_string().c_str());
      }
    }
    if (const json::object* republish = ObjectOf(*config, "republish")) {
      snapshot.republish_source = StringOf(*republish, "src");
      snapshot.republish_destination = StringOf(*republish, "dest");
    }
  }
  if (const json::object* state = ObjectOf(reply, "state")) {
    snapshot.last_sequence = UintOf(*state, "last_seq");
    if (const json::object* subjects = ObjectOf(*state, "subjects")) {
      for (const auto& entry : *subjects) {
        snapshot.matching_subjects.emplace_back(entry.key().data(), entry.key().size());
      }
    }
  }
  return snapshot;
}

absl::Status JetStreamApi::Create(const StreamSpec& spec) {
  json::object config;
  config["name"] = spec.name;
  config["description"] = spec.description;
  json::array subjects;
  for (const std::string& subject : spec.subjects) subjects.emplace_back(subject);
  config["subjects"] = std::move(subjects);
  config["retention"] = "limits";
  config["max_consumers"] = -1;
  config["max_msgs"] = -1;
  config["max_bytes"] = spec.max_bytes;
  config["max_age"] = 0;
  config["max_msgs_per_subject"] = -1;
  config["max_msg_size"] = -1;
  // Keel trims on its own clock; JetStream must never drop a record by
  // itself, so a full stream refuses new records instead.
  config["discard"] = "new";
  config["storage"] = "file";
  config["num_replicas"] = spec.replicas;
  config["duplicate_window"] = absl::ToInt64Nanoseconds(spec.duplicate_window);
  config["allow_rollup_hdrs"] = true;
  config["deny_delete"] = false;
  config["deny_purge"] = false;
  json::object republish;
  republish["src"] = spec.republish_source;
  republish["dest"] = spec.republish_destination;
  config["republish"] = std::move(republish);
  KEEL_ASSIGN_OR_RETURN(std::string text, Call(absl::StrCat(kApi, "STREAM.CREATE.", spec.name),
                                               json::serialize(config)));
  KEEL_ASSIGN_OR_RETURN(json::object reply, ParseObject(text, "create stream"));
  if (std::optional<ApiError> error = ErrorOf(reply)) {
    if (error->err_code == 10058) {
      return absl::AlreadyExistsError(absl::StrCat("jetstream: stream ", spec.name, " exists"));
    }
    return ApiErrorStatus(*error, absl::StrCat("create stream ", spec.name));
  }
  return absl::OkStatus();
}

absl::Status JetStreamApi::Purge(absl::string_view subject, uint64_t below) {
  json::object request;
  request["filter"] = json::string_view(subject.data(), subject.size());
  request["seq"] = below;
  KEEL_ASSIGN_OR_RETURN(std::string text, Call(absl::StrCat(kApi, "STREAM.PURGE.", stream_),
                                               json::serialize(request)));
  KEEL_ASSIGN_OR_RETURN(json::object reply, ParseObject(text, "purge"));
  if (std::optional<ApiError> error = ErrorOf(reply)) {
    return ApiErrorStatus(*error, absl::StrCat("purge ", subject));
  }
  return absl::OkStatus();
}

PublishReply JetStreamApi::Publish(absl::string_view subject, const NatsHeaders& headers,
                                   absl::string_view data, absl::Duration timeout) {
  PublishReply out;
  NatsReply reply = client_.Request(subject, headers, data, timeout);
  if (reply.kind != NatsReply::Kind::kReplied) {
    out.kind = PublishReply::Kind::kUnknown;
    out.problem = reply.problem;
    out.may_have_reached = reply.kind == NatsReply::Kind::kTimedOut;
    out.connection_closed = reply.kind == NatsReply::Kind::kClosed;
    return out;
  }
  absl::StatusOr<json::object> parsed = ParseObject(reply.data, "publish");
  if (!parsed.ok()) {
    out.kind = PublishReply::Kind::kUnknown;
    out.problem = std::string(parsed.status().message());
    out.may_have_reached = true;
    return out;
  }
  if (std::optional<ApiError> error = ErrorOf(*parsed)) {
    // Refusals before a proposal (no leader, no quorum) store nothing, but
    // an earlier attempt may still be stored: the caller resolves that.
    out.kind =
        MeansUnavailable(*error) ? PublishReply::Kind::kUnknown : PublishReply::Kind::kRejected;
    out.error = *error;
    out.problem = absl::StrCat(error->description, " (", error->err_code, ")");
    return out;
  }
  out.sequence = UintOf(*parsed, "seq");
  const json::value* duplicate = parsed->if_contains("duplicate");
  out.kind = duplicate != nullptr && duplicate->is_bool() && duplicate->as_bool()
                 ? PublishReply::Kind::kDuplicate
                 : PublishReply::Kind::kStored;
  return out;
}

}  // namespace keel::jetstream
