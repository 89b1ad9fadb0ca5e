// The JSON bodies of errors whose details a client branches on.
#include "keel/cmd/keel/server/http_errors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "keel/core/errors.h"

namespace keel::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(HttpErrorsTest, AnUnknownOutcomeIs503AndSaysTheEventsMayBeStored) {
  const HttpResponse response =
      ErrorResponseWithDetails(OutcomeUnknownError("no answer from the cluster"), "orders", 7);
  EXPECT_EQ(response.status, 503);
  EXPECT_THAT(response.body, HasSubstr("\"code\":\"unavailable\""));
  EXPECT_THAT(response.body, HasSubstr("\"outcome\":\"unknown\""));
}

TEST(HttpErrorsTest, PlainUnavailabilityCarriesNoOutcome) {
  const HttpResponse response = ErrorResponseWithDetails(Unavailable("not stored"), "orders", 7);
  EXPECT_EQ(response.status, 503);
  EXPECT_THAT(response.body, Not(HasSubstr("outcome")));
}

}  // namespace
}  // namespace keel::server
