// PolicyRegistry while a declaration is being written: readers are answered
// meanwhile, and racing declarations of one stream write it once; and two
// registries on one store, as daemons sharing a bus have.
#include "keel/core/policy_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "keel/core/metadata_store.h"
#include "keel/core/mutex.h"
#include "keel/tests/testing/status_matchers.h"

namespace keel {
namespace {

using ::keel::testing::HasErrorKind;

constexpr absl::Duration kWait = absl::Seconds(10);

// An in-memory MetadataStore whose Put waits until released, as a synced
// write waits for the disk.
class HeldMetadataStore final : public MetadataStore {
 public:
  absl::StatusOr<std::optional<std::string>> Get(absl::string_view key) override {
    return inner_->Get(key);
  }
  absl::Status Put(absl::string_view key, absl::string_view value) override {
    puts_.fetch_add(1);
    put_entered_.Notify();
    release_.WaitForNotification();
    return inner_->Put(key, value);
  }
  absl::Status Delete(absl::string_view key) override { return inner_->Delete(key); }
  absl::StatusOr<std::vector<Record>> List(absl::string_view prefix) override {
    return inner_->List(prefix);
  }

  bool AwaitPut() { return put_entered_.WaitForNotificationWithTimeout(kWait); }
  void Release() { release_.Notify(); }
  int puts() const { return puts_.load(); }

 private:
  std::unique_ptr<MetadataStore> inner_ = NewInMemoryMetadataStore();
  Notification put_entered_;
  Notification release_;
  std::atomic<int> puts_{0};
};

StreamPolicy WithPayloadLimit(uint64_t bytes) {
  StreamPolicy policy;
  policy.max_payload_bytes = bytes;
  return policy;
}

class PolicyRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(registry_, PolicyRegistry::Open(store_, StreamPolicy()));
  }

  // Declared before the registry and the threads that use both.
  HeldMetadataStore store_;
  std::unique_ptr<PolicyRegistry> registry_;
};

TEST_F(PolicyRegistryTest, PoliciesAreAnsweredWhileADeclarationIsBeingWritten) {
  std::thread declaring([&] { EXPECT_OK(registry_->Declare("slow", WithPayloadLimit(10))); });
  ASSERT_TRUE(store_.AwaitPut());

  // Before the fix, PolicyOf waited for the write to end: it would time out.
  Notification answered;
  std::thread reading([&] {
    EXPECT_EQ(registry_->PolicyOf("other"), StreamPolicy());
    EXPECT_EQ(registry_->PolicyOf("slow"), StreamPolicy());  // Not declared until written.
    answered.Notify();
  });
  EXPECT_TRUE(answered.WaitForNotificationWithTimeout(kWait))
      << "PolicyOf waited for a declaration's store write";
  store_.Release();
  reading.join();
  declaring.join();
  EXPECT_EQ(registry_->PolicyOf("slow"), WithPayloadLimit(10));
}

TEST_F(PolicyRegistryTest, RacingDeclarationsOfOneStreamWriteItOnceAndRefuseADifferentOne) {
  std::thread first([&] { EXPECT_OK(registry_->Declare("s", WithPayloadLimit(10))); });
  ASSERT_TRUE(store_.AwaitPut());
  absl::Status same, different;
  std::thread second([&] { same = registry_->Declare("s", WithPayloadLimit(10)); });
  std::thread third([&] { different = registry_->Declare("s", WithPayloadLimit(20)); });
  store_.Release();
  for (std::thread* t : {&first, &second, &third}) t->join();
  EXPECT_OK(same);
  EXPECT_THAT(different, HasErrorKind(ErrorKind::kResourceDrift));
  EXPECT_EQ(store_.puts(), 1);
  ASSERT_EQ(registry_->Declarations().size(), 1u);
  EXPECT_EQ(registry_->Declarations()[0].policy, WithPayloadLimit(10));
}

TEST(SharedPolicyStoreTest, ADeclarationStoredByAnotherRegistryIsFoundAndKept) {
  std::unique_ptr<MetadataStore> store = NewInMemoryMetadataStore();
  ASSERT_OK_AND_ASSIGN(auto here, PolicyRegistry::Open(*store, StreamPolicy()));
  ASSERT_OK_AND_ASSIGN(auto there, PolicyRegistry::Open(*store, StreamPolicy()));
  ASSERT_OK(there->Declare("orders", WithPayloadLimit(10 << 10)));
  ASSERT_OK(there->Declare("payments", WithPayloadLimit(30 << 10)));

  // Declaring reads the store first: the same policy is a no-op, a
  // different one is drift, and neither overwrites the stored record.
  EXPECT_OK(here->Declare("orders", WithPayloadLimit(10 << 10)));
  EXPECT_THAT(here->Declare("orders", WithPayloadLimit(20 << 10)),
              HasErrorKind(ErrorKind::kResourceDrift));
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> stored, store->Get("policy/orders"));
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(*stored, WithPayloadLimit(10 << 10).ToString());

  // Refreshing adopts what the other stored, without a Declare here.
  EXPECT_EQ(here->PolicyOf("payments"), StreamPolicy());
  ASSERT_OK(here->Refresh("payments"));
  EXPECT_EQ(here->PolicyOf("payments"), WithPayloadLimit(30 << 10));
  ASSERT_OK(there->Declare("refunds", WithPayloadLimit(40 << 10)));
  ASSERT_OK(here->RefreshAll());
  EXPECT_EQ(here->PolicyOf("refunds"), WithPayloadLimit(40 << 10));
}

TEST(SharedPolicyStoreTest, ARecordThatDoesNotParseIsDataLossWhenRefreshed) {
  std::unique_ptr<MetadataStore> store = NewInMemoryMetadataStore();
  ASSERT_OK_AND_ASSIGN(auto registry, PolicyRegistry::Open(*store, StreamPolicy()));
  ASSERT_OK(store->Put("policy/orders", "not a policy=at all"));
  EXPECT_THAT(registry->Refresh("orders"), HasErrorKind(ErrorKind::kOther));
  EXPECT_EQ(registry->Refresh("orders").code(), absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace keel
