#include "keel/statestore/leveldb/table_writes_env.h"

#include <memory>

#include "absl/strings/match.h"

namespace keel {
namespace {

// LevelDB names tables "NNNNNN.ldb" (older versions ".sst").
bool IsTableFile(const std::string& name) {
  return absl::EndsWith(name, ".ldb") || absl::EndsWith(name, ".sst");
}

// A table file whose Flush() leaves the data in the wrapped file's buffer.
class TableFile final : public leveldb::WritableFile {
 public:
  explicit TableFile(leveldb::WritableFile* file) : file_(file) {}

  leveldb::Status Append(const leveldb::Slice& data) override { return file_->Append(data); }
  leveldb::Status Close() override { return file_->Close(); }
  leveldb::Status Flush() override { return leveldb::Status::OK(); }
  leveldb::Status Sync() override { return file_->Sync(); }

 private:
  std::unique_ptr<leveldb::WritableFile> file_;
};

}  // namespace

leveldb::Status TableWritesEnv::NewWritableFile(const std::string& name,
                                                leveldb::WritableFile** result) {
  leveldb::Status status = target()->NewWritableFile(name, result);
  if (status.ok() && IsTableFile(name)) *result = new TableFile(*result);
  return status;
}

}  // namespace keel
