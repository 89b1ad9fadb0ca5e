// What an S3 ListObjectsV2 answer (XML) and an S3 error answer say, read
// with a few string searches: the elements needed are flat and their text
// holds no markup, only the five XML entities.
//
// Thread safety: pure functions.
#ifndef KEEL_COLDSTORE_S3_LIST_OBJECTS_H_
#define KEEL_COLDSTORE_S3_LIST_OBJECTS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "keel/coldstore/cold_store.h"

namespace keel::s3 {

struct ListPage {
  std::vector<ObjectInfo> objects;  // Full keys, in the order given.
  bool truncated = false;
  std::string next_continuation_token;
};

// kDataLoss (absl) when `xml` is not a ListBucketResult or a Contents lacks
// its Key or a numeric Size.
absl::StatusOr<ListPage> ParseListObjectsV2(absl::string_view xml);

// "NoSuchKey: The specified key does not exist." from an S3 error body, or
// the body's start when it is not one.
std::string DescribeErrorBody(absl::string_view body);

}  // namespace keel::s3

#endif  // KEEL_COLDSTORE_S3_LIST_OBJECTS_H_
