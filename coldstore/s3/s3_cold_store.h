// S3ColdStore: the "s3" cold store, objects in a bucket of any
// S3-compatible object store (AWS S3, R2, MinIO, ...), addressed
// path-style (http://endpoint/bucket/prefix/name) and signed with SigV4
// (coldstore/s3/sigv4.h).
//
// PutIfAbsent asks for the object's size first (HEAD) and uploads it only
// when absent, with `If-None-Match: *` so that a store that supports
// conditional writes refuses to replace an object created meanwhile (412,
// then the bytes are compared). A store that ignores the header may let a
// racing put replace the object; since Keel names objects after their
// content, the replacement holds the same bytes (rfcs/0008-cold-segments.md,
// "Put-if-absent on S3"). Uploads carry the SHA-256 of their body, which
// the store checks.
//
// Every request is retried on a transport error, a timeout, 429 or a 5xx
// answer, up to `retries` times with exponential backoff; a request that
// still fails is kUnavailable naming the object and the last error.
//
// Options (each credential falls back to its AWS_* environment variable):
// endpoint, bucket, prefix, region (AWS_REGION, else us-east-1),
// access_key_id (AWS_ACCESS_KEY_ID), secret_access_key
// (AWS_SECRET_ACCESS_KEY), session_token (AWS_SESSION_TOKEN),
// connect_timeout, request_timeout, retries, retry_backoff,
// list_page_keys, conditional_put.
//
// Thread safety: all methods are safe to call concurrently; each request
// takes a kept-alive connection from a pool (one per concurrent caller).
#ifndef KEEL_COLDSTORE_S3_S3_COLD_STORE_H_
#define KEEL_COLDSTORE_S3_S3_COLD_STORE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "keel/coldstore/cold_store.h"
#include "keel/coldstore/s3/http_connection.h"
#include "keel/coldstore/s3/sigv4.h"
#include "keel/core/backoff.h"
#include "keel/core/config.h"
#include "keel/core/mutex.h"

namespace keel {

struct S3Options {
  s3::Endpoint endpoint;
  std::string bucket;
  std::string prefix;  // Empty, or ends with '/'.
  std::string region = "us-east-1";
  sigv4::Credentials credentials;
  absl::Duration connect_timeout = absl::Seconds(5);
  absl::Duration request_timeout = absl::Seconds(30);
  int retries = 4;
  Backoff backoff{absl::Milliseconds(100), 2.0, absl::Seconds(5)};
  int list_page_keys = 1000;
  bool conditional_put = true;

  // From the store's options and, for what they leave out, the AWS_*
  // environment variables. kInvalidArgument naming what is missing or bad.
  static absl::StatusOr<S3Options> FromConfig(const Config& config);
};

class S3ColdStore final : public ColdStore {
 public:
  explicit S3ColdStore(S3Options options);
  ~S3ColdStore() override;

  absl::StatusOr<PutOutcome> PutIfAbsent(absl::string_view name, absl::string_view bytes) override;
  absl::StatusOr<std::string> ReadRange(absl::string_view name, uint64_t offset,
                                        uint64_t length) override;
  absl::StatusOr<uint64_t> Size(absl::string_view name) override;
  absl::Status Delete(absl::string_view name) override;
  absl::StatusOr<std::vector<ObjectInfo>> List(absl::string_view prefix) override;
  std::string Describe() const override;

 private:
  struct Call {
    std::string method;
    std::string key;  // The object's key (prefix + name); empty for the bucket.
    sigv4::Pairs query;
    sigv4::Pairs headers;  // Besides those every request carries.
    std::string body;
  };

  // Sends `call`, signed, retrying as the class comment says; any answer
  // that is not retried is returned, whatever its status.
  absl::StatusOr<s3::HttpResponse> Send(const Call& call);
  absl::StatusOr<s3::HttpResponse> SendOnce(const Call& call);
  std::unique_ptr<s3::HttpConnection> TakeConnection();
  void ReturnConnection(std::unique_ptr<s3::HttpConnection> connection);
  // A status for an answer no operation expected.
  absl::Status UnexpectedAnswer(absl::string_view operation, absl::string_view name,
                                const s3::HttpResponse& response) const;
  absl::Status NotFoundError(absl::string_view name) const;

  const S3Options options_;
  Mutex mu_;
  std::vector<std::unique_ptr<s3::HttpConnection>> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace keel

#endif  // KEEL_COLDSTORE_S3_S3_COLD_STORE_H_
