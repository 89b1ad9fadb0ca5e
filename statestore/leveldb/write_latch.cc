#include "keel/statestore/leveldb/write_latch.h"

#include <filesystem>
#include <memory>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "keel/core/errors.h"
#include "keel/statestore/leveldb/posix_files.h"

namespace keel {
namespace {

// What a write refused after a failure is told, by the log and the store.
constexpr char kRefused[] =
    "an earlier write failed; no write is taken until the store is reopened";

// A write-ahead log that takes nothing once the latch is set, and sets it
// when a write of its own fails.
class LatchedLog final : public leveldb::WritableFile {
 public:
  LatchedLog(std::string name, leveldb::WritableFile* file, WriteLatch& latch)
      : name_(std::move(name)), file_(file), latch_(latch) {}

  leveldb::Status Append(const leveldb::Slice& data) override {
    return Guard([&] { return file_->Append(data); });
  }
  leveldb::Status Flush() override {
    return Guard([&] { return file_->Flush(); });
  }
  leveldb::Status Sync() override {
    return Guard([&] { return file_->Sync(); });
  }
  leveldb::Status Close() override { return file_->Close(); }

 private:
  template <typename Op>
  leveldb::Status Guard(Op op) {
    if (latch_.failed()) {
      return leveldb::Status::IOError(name_, kRefused);
    }
    leveldb::Status status = op();
    if (!status.ok()) {
      latch_.Fail(Unavailable(absl::StrCat("write-ahead log: ", status.ToString())));
    }
    return status;
  }

  const std::string name_;
  const std::unique_ptr<leveldb::WritableFile> file_;
  WriteLatch& latch_;
};

std::string WriteFailurePath(const std::string& db_dir) {
  return (std::filesystem::path(db_dir) / kWriteFailureName).string();
}

}  // namespace

absl::Status WriteLatch::status() const {
  if (!failed()) return absl::OkStatus();
  MutexLock lock(&mu_);
  absl::Status refused(first_.code(), absl::StrCat(first_.message(), " (", kRefused, ")"));
  first_.ForEachPayload([&refused](absl::string_view url, const absl::Cord& payload) {
    refused.SetPayload(url, payload);  // Its error kind (core/errors.h).
  });
  return refused;
}

void WriteLatch::Fail(const absl::Status& status) {
  {
    MutexLock lock(&mu_);
    if (!first_.ok()) return;
    first_ = status;
    failed_.store(true, std::memory_order_release);
  }
  RecordWriteFailure(db_dir_);
}

std::optional<std::string> WriteFailureToken(const std::string& db_dir) {
  std::string token;
  const leveldb::Status read =
      leveldb::ReadFileToString(leveldb::Env::Default(), WriteFailurePath(db_dir), &token);
  if (read.IsNotFound()) return std::nullopt;
  return read.ok() ? token : "";  // Unreadable: as good as lost.
}

void RecordWriteFailure(const std::string& db_dir) {
  absl::BitGen random;
  const std::string token =
      absl::StrCat(absl::Hex(absl::Uniform<uint64_t>(random), absl::kZeroPad16));
  leveldb::WritableFile* created = nullptr;
  if (!leveldb::Env::Default()->NewWritableFile(WriteFailurePath(db_dir), &created).ok()) return;
  const std::unique_ptr<leveldb::WritableFile> file(created);
  if (file->Append(token).ok()) file->Sync();  // Best effort (write_latch.h).
  file->Close();
  SyncDirectory(db_dir);
}

leveldb::Status WriteLatchEnv::NewWritableFile(const std::string& name,
                                               leveldb::WritableFile** result) {
  leveldb::Status status = target()->NewWritableFile(name, result);
  if (status.ok() && absl::EndsWith(name, ".log")) *result = new LatchedLog(name, *result, latch_);
  return status;
}

}  // namespace keel
