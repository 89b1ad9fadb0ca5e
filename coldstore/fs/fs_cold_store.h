// FsColdStore: the "fs" cold store, objects as files under a directory.
//
// An object name's components are directories and the file name
// ("stream=orders/...seg" is the file ...seg in the directory
// stream=orders). PutIfAbsent writes a temporary file beside the object
// (".tmp-..."), fsyncs it, then link(2)s it to the object's name, which
// fails rather than replace an existing file, and fsyncs the directory:
// after a crash either the whole object is there under its name or it is
// not there at all. A crash can leave temporary files behind; they are
// never listed or read, and SweepTemporaryFiles removes them.
//
// Options: path (the directory, created when missing).
//
// Thread safety: all methods are safe to call concurrently; two processes
// may share the directory (link(2) decides which put creates an object).
#ifndef KEEL_COLDSTORE_FS_FS_COLD_STORE_H_
#define KEEL_COLDSTORE_FS_FS_COLD_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/coldstore/cold_store.h"

namespace keel {

class FsColdStore final : public ColdStore {
 public:
  // Creates `root` (and its parents) when missing.
  static absl::StatusOr<std::unique_ptr<FsColdStore>> Open(std::string root);

  absl::StatusOr<PutOutcome> PutIfAbsent(absl::string_view name, absl::string_view bytes) override;
  absl::StatusOr<std::string> ReadRange(absl::string_view name, uint64_t offset,
                                        uint64_t length) override;
  absl::StatusOr<uint64_t> Size(absl::string_view name) override;
  absl::Status Delete(absl::string_view name) override;
  absl::StatusOr<std::vector<ObjectInfo>> List(absl::string_view prefix) override;
  std::string Describe() const override;

  // Removes the temporary files a crashed put left behind; returns how many.
  // Only safe while no put runs on the directory (at open, say).
  absl::StatusOr<int> SweepTemporaryFiles();

 private:
  explicit FsColdStore(std::string root) : root_(std::move(root)) {}

  std::string PathOf(absl::string_view name) const;

  const std::string root_;
};

}  // namespace keel

#endif  // KEEL_COLDSTORE_FS_FS_COLD_STORE_H_
