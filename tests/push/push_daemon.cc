#include "keel/tests/push/push_daemon.h"

#include "absl/strings/str_cat.h"
#include "keel/cmd/keel/client/errors.h"
#include "keel/core/config.h"
#include "keel/core/driver_factory.h"
#include "keel/drivers/builtin_drivers.h"

namespace keel::push_test {

PushDaemon::PushDaemon() { LinkBuiltinDrivers(); }

PushDaemon::~PushDaemon() { Stop(); }

absl::Status PushDaemon::Start() {
  metrics_ = std::make_unique<server::Metrics>();
  DriverContext context;
  Config config;
  config.Set("store", "leveldb");
  config.Set("store.path", dir_.Sub("data"));
  absl::StatusOr<std::unique_ptr<EventBus>> bus = CreateBus("durable", config, context);
  if (!bus.ok()) return bus.status();
  bus_ = *std::move(bus);
  logger_ = context.logger;
  api_ = std::make_unique<server::Api>(*bus_, *metrics_);
  push::PushServiceOptions push_options;
  push_options.worker.poll_interval = absl::Milliseconds(20);
  push_options.worker.ca_file = push_ca_file_;
  push_ = std::make_unique<push::PushService>(*bus_, push_options, *logger_);
  if (absl::Status started = push_->Start(); !started.ok()) return started;
  api_->set_push(push_.get());
  server::ServerOptions options;
  options.host = "127.0.0.1";
  options.port = port_;
  options.io_threads = 2;
  options.sse_threads = 1;
  options.blocking_threads = 8;
  server_ = std::make_unique<server::Server>(options, *api_, logger_);
  if (absl::Status started = server_->Start(); !started.ok()) return started;
  port_ = server_->port();
  push_->SetSelfAddress("127.0.0.1", port_);
  return absl::OkStatus();
}

void PushDaemon::Stop() {
  if (!server_) return;
  api_->SetDraining();
  server_->StopAccepting();
  server_->DrainRequests(absl::Seconds(10));
  push_->Stop();
  bus_->Close(kWait).IgnoreError();
  server_->Stop(kWait);
  server_.reset();
  push_.reset();
  api_.reset();
  bus_.reset();
}

absl::Status PushDaemon::Restart() {
  Stop();
  return Start();
}

std::unique_ptr<client::HttpClient> PushDaemon::NewClient() const {
  return std::make_unique<client::HttpClient>("127.0.0.1", port_);
}

absl::StatusOr<client::ClientResponse> CreateSubscription(client::HttpClient& http,
                                                          const json::object& declaration) {
  return http.PostJson("/v1/subscriptions", json::serialize(declaration));
}

absl::StatusOr<std::string> PublishN(client::HttpClient& http, const std::string& stream,
                                     const std::string& type, int n) {
  absl::StatusOr<client::ClientResponse> response =
      http.PostJson(client::BuildTarget({"v1", "streams", stream, "events"}),
                    absl::StrCat("{\"type\":\"", type, "\",\"data\":{\"n\":", n, "}}"));
  if (!response.ok()) return response.status();
  if (response->status != 201) return client::ErrorFromResponse(*response);
  return std::string(json::parse(response->body).at("id").as_string());
}

std::vector<Delivered> EventsOf(const ReceivedRequest& request) {
  std::vector<Delivered> out;
  json::value body = json::parse(request.body);
  for (const json::value& event : body.at("events").as_array()) {
    Delivered delivered;
    delivered.stream = std::string(event.at("stream").as_string());
    delivered.sequence = event.at("sequence").to_number<uint64_t>();
    delivered.id = std::string(event.at("id").as_string());
    delivered.n = event.at("data").at("n").to_number<int>();
    out.push_back(std::move(delivered));
  }
  return out;
}

std::vector<Delivered> Acknowledged(const std::vector<ReceivedRequest>& requests) {
  std::vector<Delivered> out;
  for (const ReceivedRequest& request : requests) {
    if (request.answered < 200 || request.answered >= 300) continue;
    for (Delivered& event : EventsOf(request)) out.push_back(std::move(event));
  }
  return out;
}

std::vector<uint64_t> SequencesOf(const std::vector<Delivered>& events, const std::string& stream) {
  std::vector<uint64_t> out;
  for (const Delivered& event : events) {
    if (event.stream == stream) out.push_back(event.sequence);
  }
  return out;
}

}  // namespace keel::push_test
