#include "keel/drivers/jetstream/declaration_watch.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "keel/core/status_macros.h"

namespace keel::jetstream {
namespace {

constexpr absl::string_view kDeclarationPrefix = "policy/";
// How long the thread waits for a hint before it checks for lost ones (and
// for Stop).
constexpr absl::Duration kPoll = absl::Milliseconds(250);

}  // namespace

DeclarationWatch::DeclarationWatch(NatsClient& client, const BusLayout& layout, Logger& logger,
                                   std::function<absl::Status(absl::string_view)> refresh,
                                   std::function<absl::Status()> refresh_all)
    : client_(client),
      layout_(layout),
      logger_(logger),
      refresh_(std::move(refresh)),
      refresh_all_(std::move(refresh_all)) {}

DeclarationWatch::~DeclarationWatch() { Stop(); }

absl::Status DeclarationWatch::Start() {
  KEEL_ASSIGN_OR_RETURN(subscription_, client_.Subscribe(layout_.metadata_filter()));
  // A declaration stored between the bus's load and the subscription had
  // no listener: read them all once more.
  refresh_all_pending_ = true;
  thread_ = std::thread([this] { Run(); });
  return absl::OkStatus();
}

void DeclarationWatch::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  subscription_.reset();
}

void DeclarationWatch::Run() {
  while (!stop_.load()) {
    absl::StatusOr<std::optional<NatsMessage>> message = subscription_->Next(kPoll);
    if (!message.ok()) return;  // The connection closed.
    if (*message) Hint((*message)->subject);
    if (MayHaveMissed()) refresh_all_pending_ = true;
    if (refresh_all_pending_ && client_.ConnectionProblem().empty()) {
      const absl::Status status = refresh_all_();
      refresh_all_pending_ = !status.ok();
      if (!status.ok()) {
        logger_.Warn(absl::StrCat("keel jetstream: reading the declarations: ", status.message()));
      }
    }
  }
}

void DeclarationWatch::Hint(absl::string_view subject) {
  std::optional<std::string> key = layout_.KeyOfMetadataSubject(subject);
  if (!key || !absl::StartsWith(*key, kDeclarationPrefix)) return;
  const absl::string_view stream = absl::string_view(*key).substr(kDeclarationPrefix.size());
  const absl::Status status = refresh_(stream);
  if (!status.ok()) {
    // Read again with all the others once JetStream answers.
    refresh_all_pending_ = true;
    logger_.Warn(absl::StrCat("keel jetstream: reading the declaration of stream '", stream,
                              "': ", status.message()));
  }
}

bool DeclarationWatch::MayHaveMissed() {
  bool missed = false;
  const uint64_t dropped = subscription_->dropped();
  if (dropped != dropped_) {
    dropped_ = dropped;
    missed = true;
  }
  const bool disconnected = !client_.ConnectionProblem().empty();
  if (was_disconnected_ && !disconnected) missed = true;
  was_disconnected_ = disconnected;
  return missed;
}

}  // namespace keel::jetstream
