#include "keel/core/logger.h"

#include <spdlog/spdlog.h>

#include <string_view>

#include "absl/strings/match.h"

namespace keel {
namespace {

class SpdLogger : public Logger {
 public:
  void Log(LogLevel level, absl::string_view message) override {
    spdlog::default_logger_raw()->log(ToSpd(level), "{}",
                                     std::string_view(message.data(), message.size()));
  }
  bool Enabled(LogLevel level) const override {
    return spdlog::default_logger_raw()->should_log(ToSpd(level));
  }

 private:
  static spdlog::level::level_enum ToSpd(LogLevel level) {
    switch (level) {
      case LogLevel::kDebug:
        return spdlog::level::debug;
      case LogLevel::kInfo:
        return spdlog::level::info;
      case LogLevel::kWarn:
        return spdlog::level::warn;
      case LogLevel::kError:
        return spdlog::level::err;
    }
    return spdlog::level::info;
  }
};

}  // namespace

std::shared_ptr<Logger> Logger::Default() {
  static const std::shared_ptr<Logger> logger = std::make_shared<SpdLogger>();
  return logger;
}

void CapturingLogger::Log(LogLevel level, absl::string_view message) {
  MutexLock lock(&mu_);
  lines_.push_back(Line{level, std::string(message)});
}

std::vector<CapturingLogger::Line> CapturingLogger::lines() const {
  MutexLock lock(&mu_);
  return lines_;
}

bool CapturingLogger::Contains(LogLevel level, absl::string_view fragment) const {
  MutexLock lock(&mu_);
  for (const Line& line : lines_) {
    if (line.level == level && absl::StrContains(line.message, fragment)) return true;
  }
  return false;
}

}  // namespace keel
