#include "keel/cmd/keel-bench/raw_jetstream.h"

#include <nats/nats.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "keel/cmd/keel-bench/bench_report.h"

namespace keel::bench {
namespace {

absl::Status Failed(const std::string& what, natsStatus status, jsErrCode code = jsErrCode(0)) {
  return absl::UnavailableError(
      absl::StrCat(what, ": ", natsStatus_GetText(status),
                   code != 0 ? absl::StrCat(" (JetStream error ", code, ")") : ""));
}

void CountPublishError(jsCtx*, jsPubAckErr*, void* closure) {
  static_cast<std::atomic<uint64_t>*>(closure)->fetch_add(1);
}

}  // namespace

absl::StatusOr<std::unique_ptr<RawJetStream>> RawJetStream::Connect(const std::string& servers,
                                                                    int64_t max_pending) {
  std::unique_ptr<RawJetStream> raw(new RawJetStream());
  natsOptions* options = nullptr;
  natsStatus s = natsOptions_Create(&options);
  const std::vector<std::string> urls = absl::StrSplit(servers, ',', absl::SkipEmpty());
  std::vector<const char*> url_list;
  for (const std::string& url : urls) url_list.push_back(url.c_str());
  if (s == NATS_OK) {
    s = natsOptions_SetServers(options, url_list.data(), static_cast<int>(url_list.size()));
  }
  if (s == NATS_OK) s = natsOptions_SetName(options, "keel-bench raw");
  if (s == NATS_OK) s = natsConnection_Connect(&raw->connection_, options);
  natsOptions_Destroy(options);
  if (s != NATS_OK) return Failed(absl::StrCat("connecting to ", servers), s);
  jsOptions js_options;
  jsOptions_Init(&js_options);
  js_options.PublishAsync.MaxPending = max_pending;
  js_options.PublishAsync.ErrHandler = CountPublishError;
  js_options.PublishAsync.ErrHandlerClosure = &raw->failed_;
  // A publish that finds max_pending unacknowledged waits for room instead
  // of failing after nats.c's default 200 ms.
  js_options.PublishAsync.StallWait = 60'000;
  s = natsConnection_JetStream(&raw->js_, raw->connection_, &js_options);
  if (s != NATS_OK) return Failed("creating a JetStream context", s);
  return raw;
}

RawJetStream::~RawJetStream() {
  if (js_ != nullptr) jsCtx_Destroy(js_);
  if (connection_ != nullptr) {
    natsConnection_Close(connection_);
    natsConnection_Destroy(connection_);
  }
}

absl::Status RawJetStream::CreateStream(const std::string& name, const std::string& subjects,
                                        int replicas) {
  jsStreamConfig config;
  jsStreamConfig_Init(&config);
  const char* subject_list[] = {subjects.c_str()};
  config.Name = name.c_str();
  config.Subjects = subject_list;
  config.SubjectsLen = 1;
  config.Storage = js_FileStorage;
  config.Replicas = replicas;
  jsStreamInfo* info = nullptr;
  jsErrCode code = jsErrCode(0);
  const natsStatus s = js_AddStream(&info, js_, &config, nullptr, &code);
  if (info != nullptr) jsStreamInfo_Destroy(info);
  if (s != NATS_OK) return Failed(absl::StrCat("creating stream ", name), s, code);
  return absl::OkStatus();
}

absl::Status RawJetStream::DeleteStream(const std::string& name) {
  jsErrCode code = jsErrCode(0);
  const natsStatus s = js_DeleteStream(js_, name.c_str(), nullptr, &code);
  if (s == NATS_OK || s == NATS_NOT_FOUND || code == JSStreamNotFoundErr) {
    return absl::OkStatus();
  }
  return Failed(absl::StrCat("deleting stream ", name), s, code);
}

absl::StatusOr<uint64_t> RawJetStream::StreamMessages(const std::string& name) {
  jsStreamInfo* info = nullptr;
  jsErrCode code = jsErrCode(0);
  const natsStatus s = js_GetStreamInfo(&info, js_, name.c_str(), nullptr, &code);
  if (s != NATS_OK) return Failed(absl::StrCat("reading stream ", name), s, code);
  const uint64_t messages = info->State.Msgs;
  jsStreamInfo_Destroy(info);
  return messages;
}

absl::StatusOr<double> RawJetStream::PublishAll(const std::vector<std::string>& subjects,
                                                const std::vector<std::string>& data) {
  failed_.store(0);
  Stopwatch watch;
  for (size_t i = 0; i < subjects.size(); ++i) {
    const natsStatus s = js_PublishAsync(js_, subjects[i].c_str(), data[i].data(),
                                         static_cast<int>(data[i].size()), nullptr);
    if (s != NATS_OK) return Failed(absl::StrCat("js_PublishAsync of message ", i), s);
  }
  jsPubOptions wait;
  jsPubOptions_Init(&wait);
  wait.MaxWait = 120'000;
  const natsStatus s = js_PublishAsyncComplete(js_, &wait);
  const double seconds = watch.Seconds();
  if (s != NATS_OK) return Failed("js_PublishAsyncComplete", s);
  if (failed_.load() > 0) {
    return absl::InternalError(
        absl::StrCat(failed_.load(), " of ", subjects.size(), " raw publishes failed"));
  }
  return seconds;
}

}  // namespace keel::bench
