// ColdStore: a store of immutable, named objects (cold segments,
// rfcs/0008-cold-segments.md), on a filesystem or an S3-compatible object
// store; implementations are chosen by name like state stores
// (statestore/state_store.h).
//
// An object is written once and never changed: PutIfAbsent stores it only
// when no object of that name exists. Callers name objects after their
// content (a segment's stream, sequences and checksum), so finding an
// object already there is the ordinary outcome of a repeated upload after
// a crash; PutIfAbsent tells that case (identical bytes: kAlreadyPresent)
// from a real clash (different bytes: a kConflict error), which must never
// be taken for success.
//
// Object names are relative paths: components of [A-Za-z0-9._:=-] joined
// by '/', none empty and none starting with '.', at most kMaxObjectNameBytes
// in all (ValidateObjectName). Names that start with '.' are left to the
// implementations (the "fs" store's temporary files) and never listed.
//
// Errors: kNotFound (ErrorKind) for an absent object, kInvalidArgument for
// a bad name or range, kConflict for a name taken by other bytes,
// kUnavailable when the backend cannot be reached (after the
// implementation's retries), kDataLoss (absl) when the backend returned
// fewer bytes than it said it holds.
//
// Thread safety: every method is safe to call concurrently.
#ifndef KEEL_COLDSTORE_COLD_STORE_H_
#define KEEL_COLDSTORE_COLD_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/core/config.h"
#include "keel/core/option_spec.h"
#include "keel/core/registry.h"

namespace keel {

inline constexpr size_t kMaxObjectNameBytes = 1024;

// OK when `name` is a valid object name (above); else kInvalidArgument
// saying why. A prefix for List may also be empty or end with '/'.
absl::Status ValidateObjectName(absl::string_view name);
absl::Status ValidateObjectPrefix(absl::string_view prefix);

struct ObjectInfo {
  std::string name;
  uint64_t size = 0;
  friend bool operator==(const ObjectInfo&, const ObjectInfo&) = default;
};

enum class PutOutcome {
  kCreated,         // The object did not exist; it now holds the bytes.
  kAlreadyPresent,  // An object of that name already held the same bytes.
};

class ColdStore {
 public:
  virtual ~ColdStore() = default;

  // Stores `bytes` as `name` when no object has that name. Returns once the
  // object is durable in the backend (fsynced, or acknowledged by it).
  // kConflict when an object of that name holds other bytes (left as it
  // was).
  virtual absl::StatusOr<PutOutcome> PutIfAbsent(absl::string_view name,
                                                 absl::string_view bytes) = 0;

  // Bytes [offset, offset + length) of the object, fewer when the object
  // ends before offset + length (none when it ends before offset): a
  // caller that knows the size it expects compares. kNotFound when absent.
  virtual absl::StatusOr<std::string> ReadRange(absl::string_view name, uint64_t offset,
                                                uint64_t length) = 0;

  // The whole object. kNotFound when absent.
  virtual absl::StatusOr<std::string> Read(absl::string_view name);

  // The object's size in bytes. kNotFound when absent.
  virtual absl::StatusOr<uint64_t> Size(absl::string_view name) = 0;

  // Removes the object. OK when it was already absent, so that a retried
  // delete (after a crash or a timeout) succeeds.
  virtual absl::Status Delete(absl::string_view name) = 0;

  // Every object whose name starts with `prefix`, ordered by name.
  virtual absl::StatusOr<std::vector<ObjectInfo>> List(absl::string_view prefix) = 0;

  // Where the objects are, for messages ("fs:/var/lib/keel/cold",
  // "s3:http://127.0.0.1:9000/bucket/prefix/").
  virtual std::string Describe() const = 0;
};

// Like a StoreFactory, a cold store factory describes itself: OpenColdStore
// refuses a Config with a key options() does not declare or a value not of
// the declared type.
class ColdStoreFactory {
 public:
  virtual ~ColdStoreFactory() = default;
  virtual absl::string_view name() const = 0;
  virtual absl::string_view description() const = 0;
  virtual std::vector<OptionSpec> options() const { return {}; }
  // Called by OpenColdStore with a Config that ValidateOptions accepted.
  virtual absl::StatusOr<std::unique_ptr<ColdStore>> Open(const Config& config) const = 0;
};

// For implementations: the outcome of a put that found `name` taken:
// kAlreadyPresent when the object holds `bytes`, else kConflict naming it.
absl::StatusOr<PutOutcome> CompareWithExisting(ColdStore& store, absl::string_view name,
                                               absl::string_view bytes);

Registry<ColdStoreFactory>& ColdStoreRegistry();

// Looks up `name` ("fs", "s3"), checks `config` against its options and
// opens the store.
absl::StatusOr<std::unique_ptr<ColdStore>> OpenColdStore(absl::string_view name,
                                                         const Config& config);

}  // namespace keel

#define KEEL_REGISTER_COLD_STORE(ident, FactoryT)                                       \
  namespace {                                                                           \
  const bool keel_cold_store_registered_##ident =                                       \
      ::keel::RegisterOrDie(::keel::ColdStoreRegistry(), std::make_shared<FactoryT>()); \
  }                                                                                     \
  extern "C" void KeelForceLinkColdStore_##ident() {}

#define KEEL_DECLARE_COLD_STORE_HOOK(ident) extern "C" void KeelForceLinkColdStore_##ident()
#define KEEL_FORCE_LINK_COLD_STORE(ident) KeelForceLinkColdStore_##ident()

#endif  // KEEL_COLDSTORE_COLD_STORE_H_
