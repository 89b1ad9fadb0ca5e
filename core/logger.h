// Logger: the injectable log sink drivers and the daemon write through.
//
// The default logger writes through spdlog; tests inject a CapturingLogger to
// assert that warnings are raised (e.g. the durable driver's degraded mode).
//
// Thread safety: implementations must accept concurrent Log() calls.
#ifndef KEEL_CORE_LOGGER_H_
#define KEEL_CORE_LOGGER_H_

#include <memory>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/base/thread_annotations.h"
#include "keel/core/mutex.h"

namespace keel {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

class Logger {
 public:
  virtual ~Logger() = default;
  virtual void Log(LogLevel level, absl::string_view message) = 0;
  // False when `level` would be dropped: lets callers skip building messages.
  virtual bool Enabled(LogLevel level) const { return true; }

  void Debug(absl::string_view m) { Log(LogLevel::kDebug, m); }
  void Info(absl::string_view m) { Log(LogLevel::kInfo, m); }
  void Warn(absl::string_view m) { Log(LogLevel::kWarn, m); }
  void Error(absl::string_view m) { Log(LogLevel::kError, m); }

  // The process-wide default (spdlog's default logger).
  static std::shared_ptr<Logger> Default();
};

// Keeps every line in memory; for tests.
class CapturingLogger : public Logger {
 public:
  struct Line {
    LogLevel level;
    std::string message;
  };
  void Log(LogLevel level, absl::string_view message) override;
  std::vector<Line> lines() const;
  bool Contains(LogLevel level, absl::string_view fragment) const;

 private:
  mutable Mutex mu_;
  std::vector<Line> lines_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel

#endif  // KEEL_CORE_LOGGER_H_
