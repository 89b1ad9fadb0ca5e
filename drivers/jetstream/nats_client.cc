#include "keel/drivers/jetstream/nats_client.h"

#include <nats/nats.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "keel/core/errors.h"
#include "keel/drivers/jetstream/request_mux.h"

namespace keel::jetstream {
namespace {

int64_t Millis(absl::Duration d) { return std::max<int64_t>(1, absl::ToInt64Milliseconds(d)); }

std::string LastError(natsStatus status) {
  const char* text = nats_GetLastError(nullptr);
  if (text != nullptr && *text != '\0') return text;
  return natsStatus_GetText(status);
}

absl::Status OptionError(natsStatus status, absl::string_view what) {
  return InvalidArgument(absl::StrCat("jetstream: ", what, ": ", LastError(status)));
}

// Copies a received message's headers.
NatsHeaders HeadersOf(natsMsg* msg) {
  NatsHeaders headers;
  const char** keys = nullptr;
  int count = 0;
  if (natsMsgHeader_Keys(msg, &keys, &count) != NATS_OK) return headers;
  for (int i = 0; i < count; ++i) {
    const char** values = nullptr;
    int value_count = 0;
    if (natsMsgHeader_Values(msg, keys[i], &values, &value_count) != NATS_OK) continue;
    for (int j = 0; j < value_count; ++j) headers.emplace_back(keys[i], values[j]);
    free(values);
  }
  free(keys);
  return headers;
}

}  // namespace

const std::string* FindHeader(const NatsHeaders& headers, absl::string_view name) {
  for (const auto& [key, value] : headers) {
    if (key == name) return &value;
  }
  return nullptr;
}

absl::StatusOr<NatsHeaders> ParseHeaderBlock(absl::string_view block) {
  NatsHeaders headers;
  if (block.empty()) return headers;
  std::vector<absl::string_view> lines = absl::StrSplit(block, "\r\n");
  if (lines.empty() || !absl::StartsWith(lines[0], "NATS/1.0")) {
    return absl::DataLossError("jetstream: a stored message's headers do not start with NATS/1.0");
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const size_t colon = lines[i].find(':');
    if (colon == absl::string_view::npos) {
      return absl::DataLossError(
          absl::StrCat("jetstream: a stored message has a malformed header line '", lines[i], "'"));
    }
    headers.emplace_back(std::string(absl::StripAsciiWhitespace(lines[i].substr(0, colon))),
                         std::string(absl::StripAsciiWhitespace(lines[i].substr(colon + 1))));
  }
  return headers;
}

NatsSubscription::~NatsSubscription() {
  natsSubscription_Unsubscribe(sub_);
  natsSubscription_Destroy(sub_);
}

absl::StatusOr<std::optional<NatsMessage>> NatsSubscription::Next(absl::Duration timeout) {
  natsMsg* msg = nullptr;
  const natsStatus status = natsSubscription_NextMsg(&msg, sub_, Millis(timeout));
  if (status == NATS_TIMEOUT) return std::nullopt;
  // A slow consumer report only says messages were dropped: the reader
  // notices the gap in what it gets next.
  if (status == NATS_SLOW_CONSUMER) return std::nullopt;
  if (status != NATS_OK) {
    return absl::CancelledError(absl::StrCat("jetstream: subscription ended: ", LastError(status)));
  }
  NatsMessage out;
  out.subject = natsMsg_GetSubject(msg);
  out.headers = HeadersOf(msg);
  out.data.assign(natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
  natsMsg_Destroy(msg);
  return out;
}

uint64_t NatsSubscription::dropped() const {
  int64_t dropped = 0;
  natsSubscription_GetDropped(sub_, &dropped);
  return static_cast<uint64_t>(dropped);
}

absl::StatusOr<std::unique_ptr<NatsClient>> NatsClient::Connect(const NatsClientOptions& options) {
  if (options.servers.empty())
    return InvalidArgument("jetstream: no server URL given (option 'servers')");
  // libnats spins up to 2,000 times on a contended lock before it blocks;
  // with a daemon's dozens of publishing threads on a few cores the spinning
  // costs more than it saves. Effective only when this opens the library
  // for the process (later calls change nothing).
  nats_Open(0);
  natsOptions* opts = nullptr;
  if (natsStatus s = natsOptions_Create(&opts); s != NATS_OK) return OptionError(s, "options");
  struct OptionsDeleter {
    void operator()(natsOptions* o) const { natsOptions_Destroy(o); }
  };
  std::unique_ptr<natsOptions, OptionsDeleter> owned(opts);

  std::vector<const char*> urls;
  for (const std::string& url : options.servers) urls.push_back(url.c_str());
  if (natsStatus s = natsOptions_SetServers(opts, urls.data(), static_cast<int>(urls.size()));
      s != NATS_OK) {
    return OptionError(s, "servers");
  }
  natsOptions_SetName(opts, options.name.c_str());
  natsOptions_SetTimeout(opts, Millis(options.connect_timeout));
  // A daemon outlives any one server: reconnect for as long as it runs.
  natsOptions_SetMaxReconnect(opts, -1);
  natsOptions_SetReconnectWait(opts, 250);
  // Every message the driver sends is a request someone waits for: written
  // at once by the sending thread, not by libnats' flusher, which waits a
  // millisecond after being woken to gather more (a millisecond added to
  // every request of a read or a lease, measured ~1 ms against ~0.2 ms).
  natsOptions_SetSendAsap(opts, true);
  if (!options.credentials_file.empty()) {
    if (natsStatus s = natsOptions_SetUserCredentialsFromFiles(
            opts, options.credentials_file.c_str(), nullptr);
        s != NATS_OK) {
      return OptionError(s, "credentials");
    }
  }
  if (!options.token.empty()) {
    if (natsStatus s = natsOptions_SetToken(opts, options.token.c_str()); s != NATS_OK) {
      return OptionError(s, "token");
    }
  }
  if (!options.tls_ca_file.empty()) {
    natsStatus s = natsOptions_SetSecure(opts, true);
    if (s == NATS_OK) s = natsOptions_LoadCATrustedCertificates(opts, options.tls_ca_file.c_str());
    if (s != NATS_OK) return OptionError(s, "tls_ca");
  }

  natsConnection* connection = nullptr;
  const natsStatus status = natsConnection_Connect(&connection, opts);
  if (status != NATS_OK) {
    return Unavailable(absl::StrCat("jetstream: cannot connect to ",
                                    absl::StrJoin(options.servers, ","), ": ", LastError(status)));
  }
  std::unique_ptr<NatsClient> client(new NatsClient(connection));
  absl::StatusOr<std::unique_ptr<RequestMux>> requests = RequestMux::Start(connection);
  if (!requests.ok()) return requests.status();
  client->requests_ = *std::move(requests);
  return client;
}

NatsClient::NatsClient(natsConnection* connection) : connection_(connection) {}

NatsClient::~NatsClient() {
  Close();
  requests_.reset();
  natsConnection_Destroy(connection_);
}

void NatsClient::Close() {
  if (requests_) requests_->Close();
  natsConnection_Close(connection_);
}

NatsReply NatsClient::Request(absl::string_view subject, const NatsHeaders& headers,
                              absl::string_view data, absl::Duration timeout) {
  return requests_->Request(subject, headers, data, timeout);
}

absl::StatusOr<std::unique_ptr<NatsSubscription>> NatsClient::Subscribe(absl::string_view subject) {
  natsSubscription* sub = nullptr;
  const std::string subject_text(subject);
  natsStatus status = natsConnection_SubscribeSync(&sub, connection_, subject_text.c_str());
  if (status != NATS_OK) {
    return Unavailable(
        absl::StrCat("jetstream: cannot subscribe to '", subject, "': ", LastError(status)));
  }
  auto owned = std::make_unique<NatsSubscription>(sub);
  // A reader that falls behind loses messages rather than memory; the live
  // feed reads what it lost from the stream.
  natsSubscription_SetPendingLimits(sub, 1 << 18, 256 << 20);
  return owned;
}

size_t NatsClient::max_payload() const {
  const int64_t max = natsConnection_GetMaxPayload(connection_);
  return max > 0 ? static_cast<size_t>(max) : 0;
}

std::string NatsClient::ConnectionProblem() const {
  switch (natsConnection_Status(connection_)) {
    case NATS_CONN_STATUS_CONNECTED:
      return "";
    case NATS_CONN_STATUS_CLOSED:
      return "the connection to NATS is closed";
    case NATS_CONN_STATUS_RECONNECTING:
      return "reconnecting to NATS";
    case NATS_CONN_STATUS_CONNECTING:
      return "connecting to NATS";
    default:
      return "disconnected from NATS";
  }
}

}  // namespace keel::jetstream
