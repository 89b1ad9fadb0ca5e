// GoogleMock matchers for absl::Status / StatusOr and Keel error kinds, which
// this Abseil release does not ship.
//
//   EXPECT_THAT(bus->Publish(e), IsOk());
//   EXPECT_THAT(replayer->Replay(r), StatusIs(absl::StatusCode::kOutOfRange));
//   EXPECT_THAT(replayer->Replay(r), HasErrorKind(keel::ErrorKind::kRetentionGap));
//   ASSERT_OK_AND_ASSIGN(auto page, replayer->Replay(r));
#ifndef KEEL_TESTS_TESTING_STATUS_MATCHERS_H_
#define KEEL_TESTS_TESTING_STATUS_MATCHERS_H_

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "keel/core/errors.h"

namespace keel::testing {

inline const absl::Status& GetStatus(const absl::Status& status) { return status; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& status_or) {
  return status_or.status();
}

MATCHER(IsOk, "is OK") {
  const absl::Status& status = GetStatus(arg);
  if (!status.ok()) *result_listener << "status: " << status;
  return status.ok();
}

MATCHER_P(StatusIs, code, "has status code " + ::testing::PrintToString(code)) {
  const absl::Status& status = GetStatus(arg);
  *result_listener << "status: " << status;
  return status.code() == code;
}

MATCHER_P(HasErrorKind, kind,
          "has Keel error kind " + std::string(::keel::ErrorKindName(kind))) {
  const absl::Status& status = GetStatus(arg);
  *result_listener << "status: " << status << " (kind "
                   << ::keel::ErrorKindName(::keel::GetErrorKind(status)) << ")";
  return ::keel::GetErrorKind(status) == kind;
}

}  // namespace keel::testing

#define KEEL_TESTING_CONCAT_INNER_(a, b) a##b
#define KEEL_TESTING_CONCAT_(a, b) KEEL_TESTING_CONCAT_INNER_(a, b)

#define ASSERT_OK(expr) ASSERT_THAT((expr), ::keel::testing::IsOk())
#define EXPECT_OK(expr) EXPECT_THAT((expr), ::keel::testing::IsOk())

#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  ASSERT_OK_AND_ASSIGN_IMPL_(KEEL_TESTING_CONCAT_(keel_statusor_, __LINE__), lhs, expr)
#define ASSERT_OK_AND_ASSIGN_IMPL_(statusor, lhs, expr)         \
  auto statusor = (expr);                                       \
  ASSERT_TRUE(statusor.ok()) << "status: " << statusor.status(); \
  lhs = std::move(statusor).value()

#endif  // KEEL_TESTS_TESTING_STATUS_MATCHERS_H_
