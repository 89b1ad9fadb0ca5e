#include "statestore/leveldb/write_latch.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/errors.h"

namespace keel {
namespace {

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
      return leveldb::Status::IOError(name_, "an earlier write failed; no write is taken");
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

}  // namespace

absl::Status WriteLatch::status() const {
  if (!failed()) return absl::OkStatus();
  MutexLock lock(&mu_);
  absl::Status refused(first_.code(),
                       absl::StrCat(first_.message(),
                                    " (an earlier write failed; no write is taken until the "
                                    "store is reopened)"));
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
  std::ifstream file(std::filesystem::path(db_dir) / kWriteFailureName);
  if (!file.is_open()) return std::nullopt;
  std::string token;
  std::getline(file, token);
  return token;
}

void RecordWriteFailure(const std::string& db_dir) {
  absl::BitGen random;
  const std::string token =
      absl::StrCat(absl::Hex(absl::Uniform<uint64_t>(random), absl::kZeroPad16));
  const std::string path = (std::filesystem::path(db_dir) / kWriteFailureName).string();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  const bool written =
      ::write(fd, token.data(), token.size()) == static_cast<ssize_t>(token.size());
  if (written) ::fsync(fd);
  ::close(fd);
  const int dir = ::open(db_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return;
  ::fsync(dir);
  ::close(dir);
}

leveldb::Status WriteLatchEnv::NewWritableFile(const std::string& name,
                                               leveldb::WritableFile** result) {
  leveldb::Status status = target()->NewWritableFile(name, result);
  if (status.ok() && absl::EndsWith(name, ".log")) *result = new LatchedLog(name, *result, latch_);
  return status;
}

}  // namespace keel
