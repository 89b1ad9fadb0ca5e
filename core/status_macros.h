// Early-return helpers for absl::Status, which this Abseil release lacks.
//
//   KEEL_RETURN_IF_ERROR(store.Write(batch));
//   KEEL_ASSIGN_OR_RETURN(auto page, replayer.Replay(request));
#ifndef KEEL_CORE_STATUS_MACROS_H_
#define KEEL_CORE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define KEEL_RETURN_IF_ERROR(expr)                  \
  do {                                              \
    ::absl::Status keel_status_ = (expr);           \
    if (!keel_status_.ok()) return keel_status_;    \
  } while (0)

#define KEEL_STATUS_CONCAT_INNER_(a, b) a##b
#define KEEL_STATUS_CONCAT_(a, b) KEEL_STATUS_CONCAT_INNER_(a, b)

#define KEEL_ASSIGN_OR_RETURN(lhs, expr) \
  KEEL_ASSIGN_OR_RETURN_IMPL_(KEEL_STATUS_CONCAT_(keel_statusor_, __LINE__), lhs, expr)

#define KEEL_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                \
  if (!statusor.ok()) return statusor.status();          \
  lhs = std::move(statusor).value()

#endif  // KEEL_CORE_STATUS_MACROS_H_
