// The cold stores the conformance suite runs against: each backend hands
// out fresh, empty stores ("fs": a new directory; "s3": a new key prefix in
// a bucket of an S3-compatible server the backend started on loopback).
#ifndef KEEL_TESTS_COLDSTORE_COLD_STORE_BACKENDS_H_
#define KEEL_TESTS_COLDSTORE_COLD_STORE_BACKENDS_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "keel/coldstore/cold_store.h"

namespace keel {

class ColdStoreBackend {
 public:
  virtual ~ColdStoreBackend() = default;
  // A store that holds no object yet.
  virtual absl::StatusOr<std::unique_ptr<ColdStore>> NewStore() = 0;
};

struct BackendMaker {
  std::string name;
  std::function<std::unique_ptr<ColdStoreBackend>()> make;
};

std::vector<BackendMaker> AllBackendMakers();

}  // namespace keel

#endif  // KEEL_TESTS_COLDSTORE_COLD_STORE_BACKENDS_H_
