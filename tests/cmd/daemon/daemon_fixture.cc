#include "keel/tests/cmd/daemon/daemon_fixture.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "keel/cmd/keel/client/errors.h"
#include "keel/core/driver_factory.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"
#include "keel/drivers/builtin_drivers.h"

extern char** environ;

namespace keel::daemon_test {

DaemonOptions::DaemonOptions() {
  server.host = "127.0.0.1";
  server.port = 0;
  server.io_threads = 2;
  server.sse_threads = 2;  // Not the machine-dependent default: streams split over threads.
  server.blocking_threads = 16;
  server.sse_keepalive = absl::Milliseconds(200);
  server.sse_retry = absl::Milliseconds(100);
  server.idle_timeout = absl::Seconds(30);
  server.trim_interval = absl::Milliseconds(50);
}

InProcessDaemon::InProcessDaemon(DaemonOptions options)
    : options_(std::move(options)), data_dir_(dir_.Sub("data")) {
  LinkBuiltinDrivers();
  if (options_.driver == "durable" && !options_.degraded) {
    if (!options_.config.Has("store")) options_.config.Set("store", "leveldb");
    if (!options_.config.Has("store.path")) options_.config.Set("store.path", data_dir_);
  }
  port_ = options_.server.port;
}

InProcessDaemon::~InProcessDaemon() { Stop(); }

absl::Status InProcessDaemon::Start() {
  metrics_ = std::make_unique<server::Metrics>();
  DriverContext context;
  server::Metrics* metrics = metrics_.get();
  context.on_store_write = [metrics](absl::Duration d) { metrics->store_write_latency().Observe(d); };
  absl::StatusOr<std::unique_ptr<EventBus>> bus = CreateBus(options_.driver, options_.config, context);
  if (!bus.ok()) return bus.status();
  bus_ = *std::move(bus);
  if (options_.wrap_bus) bus_ = options_.wrap_bus(std::move(bus_));
  api_ = std::make_unique<server::Api>(*bus_, *metrics_);
  server::ServerOptions server_options = options_.server;
  server_options.port = port_;
  server_ = std::make_unique<server::Server>(server_options, *api_,
                                            options_.logger ? options_.logger : context.logger);
  if (absl::Status started = server_->Start(); !started.ok()) return started;
  port_ = server_->port();
  return absl::OkStatus();
}

void InProcessDaemon::Stop() {
  if (!server_) return;
  api_->SetDraining();
  server_->StopAccepting();
  server_->DrainRequests(absl::Seconds(10));
  bus_->Close(kWait).IgnoreError();
  server_->Stop(kWait);
  server_.reset();
  api_.reset();
  bus_.reset();
}

absl::Status InProcessDaemon::Restart() {
  Stop();
  return Start();
}

std::unique_ptr<client::HttpClient> InProcessDaemon::NewClient() const {
  return std::make_unique<client::HttpClient>("127.0.0.1", port_);
}

absl::StatusOr<std::unique_ptr<client::SseReader>> InProcessDaemon::OpenSse(
    client::SseOptions options) const {
  return client::SseReader::Open("127.0.0.1", port_, options);
}

// --- DaemonProcess ---------------------------------------------------------

DaemonProcess::DaemonProcess(std::string data_dir, std::string log_dir)
    : data_dir_(std::move(data_dir)), log_dir_(std::move(log_dir)) {}

DaemonProcess::~DaemonProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
  }
}

absl::Status DaemonProcess::Start(uint16_t port, std::vector<std::string> extra) {
  if (pid_ > 0) return absl::FailedPreconditionError("already running");
  ++starts_;
  const std::string port_file = absl::StrCat(log_dir_, "/port-", starts_);
  const std::string log_file = absl::StrCat(log_dir_, "/daemon-", starts_, ".log");
  unlink(port_file.c_str());
  std::vector<std::string> args = {KEEL_BINARY,  "daemon",
                                   "--listen",   absl::StrCat("127.0.0.1:", port),
                                   "--port-file", port_file,
                                   "--data-dir", data_dir_,
                                   "--log-level", "warn",
                                   "--sse-keepalive", "500ms"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, log_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  // The test binary may block signals in some threads; the child starts clean.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGTERM);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  pid_t pid = -1;
  const int spawned = posix_spawn(&pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (spawned != 0) {
    return absl::InternalError(absl::StrCat("cannot spawn ", KEEL_BINARY, ": ", strerror(spawned)));
  }
  pid_ = pid;

  const absl::Time deadline = absl::Now() + kWait;
  while (absl::Now() < deadline) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::InternalError(absl::StrCat("keel daemon exited during start-up:\n", Logs()));
    }
    std::ifstream file(port_file);
    std::string text;
    uint32_t bound = 0;
    if (file && std::getline(file, text) && absl::SimpleAtoi(text, &bound) && bound > 0) {
      port_ = static_cast<uint16_t>(bound);
      return absl::OkStatus();
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  return absl::DeadlineExceededError(absl::StrCat("keel daemon wrote no port file:\n", Logs()));
}

absl::StatusOr<int> DaemonProcess::Terminate(int signal) {
  if (pid_ <= 0) return absl::FailedPreconditionError("not running");
  kill(pid_, signal);
  const absl::Time deadline = absl::Now() + kWait;
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) != pid_) {
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("keel daemon did not exit on signal ", signal, ":\n", Logs()));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

absl::Status DaemonProcess::Signal(int signal) {
  if (pid_ <= 0) return absl::FailedPreconditionError("not running");
  if (kill(pid_, signal) != 0) return absl::InternalError("kill failed");
  return absl::OkStatus();
}

std::string DaemonProcess::Logs() const {
  std::string all;
  for (int i = 1; i <= starts_; ++i) {
    std::ifstream file(absl::StrCat(log_dir_, "/daemon-", i, ".log"));
    std::stringstream text;
    text << file.rdbuf();
    absl::StrAppend(&all, "--- daemon run ", i, " ---\n", text.str());
  }
  return all;
}

// --- Helpers ---------------------------------------------------------------

absl::StatusOr<client::ClientResponse> PostEvents(client::HttpClient& http,
                                                  const std::string& stream,
                                                  const std::string& body,
                                                  client::Headers headers) {
  return http.PostJson(client::BuildTarget({"v1", "streams", stream, "events"}), body,
                       std::move(headers));
}

absl::StatusOr<PublishedEvent> Publish(client::HttpClient& http, const std::string& stream,
                                       const std::string& type, const std::string& data_json,
                                       const std::string& tenant) {
  json::object body;
  body["type"] = type;
  body["data"] = json::parse(data_json);
  if (!tenant.empty()) body["tenant"] = tenant;
  absl::StatusOr<client::ClientResponse> response = PostEvents(http, stream, json::serialize(body));
  if (!response.ok()) return response.status();
  if (response->status != 201) {
    absl::Status error = client::ErrorFromResponse(*response);
    return error.ok() ? absl::InternalError(absl::StrCat("expected 201: ", response->body)) : error;
  }
  json::object receipt = json::parse(response->body).as_object();
  PublishedEvent event;
  event.sequence = receipt.at("sequence").to_number<uint64_t>();
  event.cursor = std::string(receipt.at("cursor").as_string());
  event.id = std::string(receipt.at("id").as_string());
  event.duplicate = receipt.at("duplicate").as_bool();
  return event;
}

absl::StatusOr<json::value> GetJson(client::HttpClient& http, const std::string& target) {
  absl::StatusOr<client::ClientResponse> response = http.Get(target);
  if (!response.ok()) return response.status();
  if (absl::Status error = client::ErrorFromResponse(*response); !error.ok()) return error;
  boost::system::error_code ec;
  json::value value = json::parse(response->body, ec);
  if (ec) return absl::InternalError(absl::StrCat("not JSON: ", response->body));
  return value;
}

absl::StatusOr<json::object> AwaitTrimmed(client::HttpClient& http, const std::string& stream,
                                          uint64_t first_sequence, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    KEEL_ASSIGN_OR_RETURN(json::value bounds,
                          GetJson(http, client::BuildTarget({"v1", "streams", stream})));
    if (bounds.at("firstSequence").to_number<uint64_t>() >= first_sequence ||
        absl::Now() >= deadline) {
      return bounds.as_object();
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

StoreSnapshot SnapshotOf(EventBus& bus) {
  StoreSnapshot snapshot;
  absl::StatusOr<std::vector<StreamInfo>> infos = bus.replayer()->ListStreams("", 1000);
  EXPECT_TRUE(infos.ok()) << infos.status();
  if (!infos.ok()) return snapshot;
  for (const StreamInfo& info : *infos) {
    snapshot.emplace_back(info.stream, info.first_sequence, info.last_sequence, info.count);
  }
  return snapshot;
}

std::string ErrorCode(const client::ClientResponse& response) {
  boost::system::error_code ec;
  json::value value = json::parse(response.body, ec);
  if (ec || !value.is_object()) return "<not JSON: " + response.body + ">";
  const json::value* error = value.as_object().if_contains("error");
  if (error == nullptr || !error->is_object()) return "<no error object: " + response.body + ">";
  const json::value* code = error->as_object().if_contains("code");
  if (code == nullptr || !code->is_string()) return "<no code: " + response.body + ">";
  return std::string(code->as_string());
}

std::vector<uint64_t> SequencesOf(const std::vector<client::SseFrame>& frames) {
  std::vector<uint64_t> sequences;
  for (const auto& frame : frames) sequences.push_back(FrameSequence(frame));
  return sequences;
}

double MetricValue(const std::string& text, const std::string& name) {
  const size_t at = text.find("\n" + name + " ");
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + name.size() + 2));
}

absl::StatusOr<std::vector<client::SseFrame>> ReadEvents(client::SseReader& reader, size_t count,
                                                         absl::Duration timeout) {
  std::vector<client::SseFrame> frames;
  absl::Time deadline = absl::Now() + timeout;  // Keepalives are no progress.
  while (frames.size() < count) {
    absl::StatusOr<client::SseFrame> frame =
        reader.Next(std::max(deadline - absl::Now(), absl::ZeroDuration()));
    if (!frame.ok()) {
      return absl::Status(frame.status().code(),
                          absl::StrCat(frame.status().message(), " after ", frames.size(), " of ",
                                       count, " events"));
    }
    if (frame->IsEvent()) {
      frames.push_back(*std::move(frame));
      deadline = absl::Now() + timeout;
    }
  }
  return frames;
}

json::object FrameJson(const client::SseFrame& frame) {
  boost::system::error_code ec;
  json::value value = json::parse(frame.data, ec);
  if (ec || !value.is_object()) return json::object{{"unparsable", frame.data}};
  return value.as_object();
}

uint64_t FrameSequence(const client::SseFrame& frame) {
  json::object object = FrameJson(frame);
  const json::value* sequence = object.if_contains("sequence");
  return sequence != nullptr && sequence->is_number() ? sequence->to_number<uint64_t>() : 0;
}

absl::StatusOr<std::vector<json::object>> ReplayAll(client::HttpClient& http,
                                                    const std::string& stream) {
  std::vector<json::object> events;
  std::string after = "earliest";
  while (true) {
    absl::StatusOr<json::value> page = GetJson(
        http, client::BuildTarget({"v1", "streams", stream, "events"},
                                  {{"after", after}, {"limit", "1000"}}));
    if (!page.ok()) return page.status();
    for (const json::value& event : page->at("events").as_array()) events.push_back(event.as_object());
    if (page->at("reachedEnd").as_bool()) return events;
    after = std::string(page->at("next").as_string());
  }
}

std::vector<uint64_t> Range(uint64_t first, uint64_t last) {
  std::vector<uint64_t> values;
  for (uint64_t v = first; v <= last; ++v) values.push_back(v);
  return values;
}

}  // namespace keel::daemon_test
