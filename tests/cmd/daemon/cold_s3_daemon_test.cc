// `keel daemon` with an s3 cold store given in its config file, as a
// [cold_store] block (cmd/keel/cli.cc), against s3rver: the trimmer tiers a
// stream past its hot window into the bucket, and the stream's cold events
// are read back from it. The block's keys are the s3 store's options.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "absl/strings/str_cat.h"
#include "keel/coldstore/builtin_cold_stores.h"
#include "keel/coldstore/cold_store.h"
#include "keel/tests/cmd/daemon/daemon_fixture.h"
#include "keel/tests/coldstore/s3rver_process.h"
#include "keel/tests/testing/status_matchers.h"
#include "keel/tests/testing/temp_dir.h"

namespace keel::daemon_test {
namespace {

using ::testing::SizeIs;

constexpr uint64_t kEvents = 300;
constexpr char kPrefix[] = "from-config";

TEST(ColdS3DaemonTest, ConfigFileBlockGivesTheS3ColdStore) {
  ::keel::testing::TempDir dir;
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<::keel::testing::S3rverProcess> s3,
      ::keel::testing::S3rverProcess::Start(KEEL_S3RVER_INSTALL_DIR, dir.Sub("s3rver")));
  const std::string config_path = dir.Sub("keel.conf");
  {
    std::ofstream config(config_path);
    config << "cold-store = s3\n"
              "declare = orders hot.max_events=100\n"
              "trim-interval = 50ms\n"
              "driver-option = cold_segment_events=50\n"
              "[cold_store]\n";
    const Config block = s3->StoreConfig(kPrefix);
    for (const auto& [key, value] : block.values()) {
      config << key << " = " << value << "\n";
    }
  }
  DaemonProcess daemon(dir.Sub("data"), dir.path());
  ASSERT_OK(daemon.Start(0, {"--config", config_path})) << daemon.Logs();
  client::HttpClient http("127.0.0.1", daemon.port());

  std::string body = "[";
  for (uint64_t i = 1; i <= kEvents; ++i) {
    absl::StrAppend(&body, i > 1 ? "," : "", R"({"type":"t","data":{"n":)", i, "}}");
  }
  body += "]";
  ASSERT_OK_AND_ASSIGN(client::ClientResponse posted, PostEvents(http, "orders", body));
  ASSERT_EQ(posted.status, 201) << posted.body;

  json::object info;
  const absl::Time deadline = absl::Now() + kWait;
  do {
    absl::SleepFor(absl::Milliseconds(50));
    ASSERT_OK_AND_ASSIGN(json::value got, GetJson(http, "/v1/streams/orders"));
    info = got.as_object();
  } while (!info.contains("cold") && absl::Now() < deadline);
  ASSERT_TRUE(info.contains("cold")) << json::serialize(info) << daemon.Logs();
  const uint64_t segments = info.at("cold").at("segments").to_number<uint64_t>();
  EXPECT_GE(segments, 1u);

  // The segments are in the bucket, under the block's prefix.
  LinkBuiltinColdStores();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ColdStore> store,
                       OpenColdStore("s3", s3->StoreConfig(kPrefix)));
  ASSERT_OK_AND_ASSIGN(std::vector<ObjectInfo> objects, store->List("stream=orders/"));
  EXPECT_GE(objects.size(), segments);

  // And every event is read back, the cold ones from the bucket.
  ASSERT_OK_AND_ASSIGN(std::vector<json::object> events, ReplayAll(http, "orders"));
  ASSERT_THAT(events, SizeIs(kEvents));
  for (uint64_t i = 0; i < kEvents; ++i) {
    ASSERT_EQ(events[i].at("data").at("n").to_number<uint64_t>(), i + 1);
  }
  ASSERT_OK_AND_ASSIGN(int code, daemon.Terminate());
  EXPECT_EQ(code, 0) << daemon.Logs();
}

}  // namespace
}  // namespace keel::daemon_test
