#include "keel/coldstore/s3/s3_cold_store.h"

#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "keel/coldstore/s3/list_objects.h"
#include "keel/core/errors.h"
#include "keel/core/status_macros.h"

namespace keel {
namespace {

std::string Environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

// An option, else its environment variable, else `fallback`.
std::string OptionOrEnvironment(const Config& config, absl::string_view key, const char* variable,
                                absl::string_view fallback = "") {
  if (config.Has(key)) return config.GetString(key, "");
  std::string value = Environment(variable);
  return value.empty() ? std::string(fallback) : value;
}

bool Retryable(const absl::StatusOr<s3::HttpResponse>& response) {
  if (!response.ok()) {
    return response.status().code() == absl::StatusCode::kUnavailable ||
           response.status().code() == absl::StatusCode::kDeadlineExceeded;
  }
  return response->status == 429 || response->status >= 500;
}

class S3ColdStoreFactory final : public ColdStoreFactory {
 public:
  absl::string_view name() const override { return "s3"; }
  absl::string_view description() const override {
    return "immutable objects in a bucket of an S3-compatible object store (path-style, SigV4)";
  }
  std::vector<OptionSpec> options() const override {
    const S3Options defaults;
    return {
        StringOption("endpoint", "(required)", "http://host[:port] of the object store"),
        StringOption("bucket", "(required)", "the bucket, which must exist"),
        StringOption("prefix", "", "a key prefix for every object (a '/' is added)"),
        StringOption("region", "$AWS_REGION, else us-east-1", "the region signed for"),
        StringOption("access_key_id", "$AWS_ACCESS_KEY_ID", "the access key id"),
        StringOption("secret_access_key", "$AWS_SECRET_ACCESS_KEY", "the secret access key"),
        StringOption("session_token", "$AWS_SESSION_TOKEN", "temporary credentials' token"),
        DurationOption("connect_timeout", defaults.connect_timeout, "bound on one connect"),
        DurationOption("request_timeout", defaults.request_timeout,
                       "bound on sending one request and reading its answer"),
        UintOption("retries", defaults.retries,
                   "retries of a request after a network error, a timeout, 429 or 5xx"),
        DurationOption("retry_backoff", defaults.backoff.initial,
                       "delay before the first retry; doubles with each retry, up to 5s"),
        UintOption("list_page_keys", defaults.list_page_keys,
                   "keys asked for per listing request (1..1000)"),
        BoolOption("conditional_put", defaults.conditional_put,
                   "send If-None-Match: * with uploads (for stores that refuse it: false)"),
    };
  }
  absl::StatusOr<std::unique_ptr<ColdStore>> Open(const Config& config) const override {
    KEEL_ASSIGN_OR_RETURN(S3Options options, S3Options::FromConfig(config));
    return std::unique_ptr<ColdStore>(std::make_unique<S3ColdStore>(std::move(options)));
  }
};

}  // namespace

KEEL_REGISTER_COLD_STORE(s3, S3ColdStoreFactory);

absl::StatusOr<S3Options> S3Options::FromConfig(const Config& config) {
  S3Options options;
  auto missing = [](absl::string_view what) {
    return InvalidArgument(absl::StrCat("cold store 's3': ", what, " is required"));
  };
  const std::string endpoint = config.GetString("endpoint", "");
  if (endpoint.empty()) return missing("option 'endpoint'");
  KEEL_ASSIGN_OR_RETURN(options.endpoint, s3::ParseEndpoint(endpoint));
  options.bucket = config.GetString("bucket", "");
  if (options.bucket.empty()) return missing("option 'bucket'");
  if (absl::StrContains(options.bucket, "/")) {
    return InvalidArgument("cold store 's3': option 'bucket' must not contain '/'");
  }
  options.prefix = config.GetString("prefix", "");
  KEEL_RETURN_IF_ERROR(ValidateObjectPrefix(options.prefix));
  if (!options.prefix.empty() && options.prefix.back() != '/') options.prefix.push_back('/');
  options.region = OptionOrEnvironment(config, "region", "AWS_REGION", "us-east-1");
  options.credentials.access_key_id =
      OptionOrEnvironment(config, "access_key_id", "AWS_ACCESS_KEY_ID");
  options.credentials.secret_access_key =
      OptionOrEnvironment(config, "secret_access_key", "AWS_SECRET_ACCESS_KEY");
  options.credentials.session_token =
      OptionOrEnvironment(config, "session_token", "AWS_SESSION_TOKEN");
  if (options.credentials.access_key_id.empty()) {
    return missing("option 'access_key_id' (or AWS_ACCESS_KEY_ID)");
  }
  if (options.credentials.secret_access_key.empty()) {
    return missing("option 'secret_access_key' (or AWS_SECRET_ACCESS_KEY)");
  }
  KEEL_ASSIGN_OR_RETURN(options.connect_timeout,
                        config.GetDuration("connect_timeout", options.connect_timeout));
  KEEL_ASSIGN_OR_RETURN(options.request_timeout,
                        config.GetDuration("request_timeout", options.request_timeout));
  KEEL_ASSIGN_OR_RETURN(uint64_t retries, config.GetUint("retries", options.retries, 0, 100));
  options.retries = static_cast<int>(retries);
  KEEL_ASSIGN_OR_RETURN(options.backoff.initial,
                        config.GetDuration("retry_backoff", options.backoff.initial));
  if (options.backoff.max < options.backoff.initial) options.backoff.max = options.backoff.initial;
  KEEL_ASSIGN_OR_RETURN(uint64_t page,
                        config.GetUint("list_page_keys", options.list_page_keys, 1, 1000));
  options.list_page_keys = static_cast<int>(page);
  KEEL_ASSIGN_OR_RETURN(options.conditional_put,
                        config.GetBool("conditional_put", options.conditional_put));
  return options;
}

S3ColdStore::S3ColdStore(S3Options options) : options_(std::move(options)) {}

S3ColdStore::~S3ColdStore() = default;

std::string S3ColdStore::Describe() const {
  return absl::StrCat("s3:", options_.endpoint.Describe(), "/", options_.bucket, "/",
                      options_.prefix);
}

std::unique_ptr<s3::HttpConnection> S3ColdStore::TakeConnection() {
  {
    MutexLock lock(&mu_);
    if (!idle_.empty()) {
      std::unique_ptr<s3::HttpConnection> connection = std::move(idle_.back());
      idle_.pop_back();
      return connection;
    }
  }
  return std::make_unique<s3::HttpConnection>(options_.endpoint, options_.connect_timeout,
                                              options_.request_timeout);
}

void S3ColdStore::ReturnConnection(std::unique_ptr<s3::HttpConnection> connection) {
  MutexLock lock(&mu_);
  idle_.push_back(std::move(connection));
}

absl::StatusOr<s3::HttpResponse> S3ColdStore::SendOnce(const Call& call) {
  const std::string amz_date = sigv4::AmzDate(absl::Now());
  sigv4::Request request;
  request.method = call.method;
  request.path = absl::StrCat("/", options_.bucket);
  if (!call.key.empty()) absl::StrAppend(&request.path, "/", call.key);
  request.query = call.query;
  request.payload_hash = sigv4::Sha256Hex(call.body);
  request.headers = call.headers;
  request.headers.emplace_back("x-amz-date", amz_date);
  request.headers.emplace_back("x-amz-content-sha256", request.payload_hash);
  if (!options_.credentials.session_token.empty()) {
    request.headers.emplace_back("x-amz-security-token", options_.credentials.session_token);
  }

  s3::HttpRequest http;
  http.method = call.method;
  http.target = sigv4::EncodedTarget(request);
  http.headers = request.headers;
  http.body = call.body;
  // Host is signed as the connection sends it.
  request.headers.emplace_back("host", options_.endpoint.authority());
  http.headers.emplace_back(
      "Authorization",
      sigv4::Authorization(options_.credentials, sigv4::Scope{options_.region, "s3"}, amz_date,
                           request));

  std::unique_ptr<s3::HttpConnection> connection = TakeConnection();
  absl::StatusOr<s3::HttpResponse> response = connection->Exchange(http);
  ReturnConnection(std::move(connection));
  return response;
}

absl::StatusOr<s3::HttpResponse> S3ColdStore::Send(const Call& call) {
  thread_local absl::BitGen gen;
  for (int retry = 1;; ++retry) {
    absl::StatusOr<s3::HttpResponse> response = SendOnce(call);
    if (!Retryable(response)) return response;
    if (retry > options_.retries) {
      const std::string last = response.ok() ? absl::StrCat("HTTP ", response->status, " ",
                                                            s3::DescribeErrorBody(response->body))
                                             : std::string(response.status().message());
      return Unavailable(absl::StrCat("s3: ", call.method, " '", call.key, "' in ", Describe(),
                                      " failed ", retry, " times; last: ", last));
    }
    // Full jitter: retries of many callers do not arrive together.
    const absl::Duration delay = options_.backoff.Delay(retry);
    absl::SleepFor(absl::Uniform(gen, 0.5, 1.0) * delay);
  }
}

absl::Status S3ColdStore::NotFoundError(absl::string_view name) const {
  return NotFound(absl::StrCat("cold object '", name, "' not found in ", Describe()));
}

absl::Status S3ColdStore::UnexpectedAnswer(absl::string_view operation, absl::string_view name,
                                           const s3::HttpResponse& response) const {
  const std::string message =
      absl::StrCat("s3: ", operation, " '", name, "' in ", Describe(), ": HTTP ", response.status,
                   " ", s3::DescribeErrorBody(response.body));
  switch (response.status) {
    case 400:
      return InvalidArgument(message);
    case 401:
    case 403:
      return absl::PermissionDeniedError(message);
    case 404:
      return NotFound(message);  // No such bucket.
    default:
      return absl::InternalError(message);
  }
}

absl::StatusOr<uint64_t> S3ColdStore::Size(absl::string_view name) {
  KEEL_RETURN_IF_ERROR(ValidateObjectName(name));
  KEEL_ASSIGN_OR_RETURN(s3::HttpResponse response,
                        Send(Call{"HEAD", absl::StrCat(options_.prefix, name), {}, {}, ""}));
  if (response.status == 404) return NotFoundError(name);
  if (response.status != 200) return UnexpectedAnswer("HEAD", name, response);
  uint64_t size = 0;
  if (!absl::SimpleAtoi(response.Header("content-length"), &size)) {
    return absl::InternalError(absl::StrCat("s3: HEAD '", name, "' in ", Describe(),
                                            " answered without a Content-Length"));
  }
  return size;
}

absl::StatusOr<std::string> S3ColdStore::ReadRange(absl::string_view name, uint64_t offset,
                                                   uint64_t length) {
  KEEL_RETURN_IF_ERROR(ValidateObjectName(name));
  if (length == 0) {
    // No range of zero bytes exists in HTTP; the object must still exist.
    KEEL_RETURN_IF_ERROR(Size(name).status());
    return std::string();
  }
  Call call{"GET", absl::StrCat(options_.prefix, name), {}, {}, ""};
  const bool whole = offset == 0 && length == std::numeric_limits<uint64_t>::max();
  if (!whole) {
    const bool to_end = length > std::numeric_limits<uint64_t>::max() - offset;
    call.headers.emplace_back("Range",
                              to_end ? absl::StrCat("bytes=", offset, "-")
                                     : absl::StrCat("bytes=", offset, "-", offset + length - 1));
  }
  KEEL_ASSIGN_OR_RETURN(s3::HttpResponse response, Send(call));
  switch (response.status) {
    case 206:
      if (response.body.size() > length) response.body.resize(length);
      return std::move(response.body);
    case 200:
      // The whole object (asked for, or a store that ignored the range).
      if (whole) return std::move(response.body);
      if (offset >= response.body.size()) return std::string();
      return response.body.substr(offset, length);
    case 416:
      return std::string();  // The object ends before `offset`.
    case 404:
      return NotFoundError(name);
    default:
      return UnexpectedAnswer("GET", name, response);
  }
}

absl::StatusOr<PutOutcome> S3ColdStore::PutIfAbsent(absl::string_view name,
                                                    absl::string_view bytes) {
  KEEL_RETURN_IF_ERROR(ValidateObjectName(name));
  absl::StatusOr<uint64_t> existing = Size(name);
  if (existing.ok()) return CompareWithExisting(*this, name, bytes);
  if (GetErrorKind(existing.status()) != ErrorKind::kNotFound) return existing.status();

  Call call{"PUT", absl::StrCat(options_.prefix, name), {}, {}, std::string(bytes)};
  call.headers.emplace_back("Content-Type", "application/octet-stream");
  if (options_.conditional_put) call.headers.emplace_back("If-None-Match", "*");
  KEEL_ASSIGN_OR_RETURN(s3::HttpResponse response, Send(call));
  if (response.status == 200) return PutOutcome::kCreated;
  // Created meanwhile by another put (412), or a conditional write racing
  // with another (409): what is there now decides.
  if (response.status == 412 || response.status == 409) {
    return CompareWithExisting(*this, name, bytes);
  }
  return UnexpectedAnswer("PUT", name, response);
}

absl::Status S3ColdStore::Delete(absl::string_view name) {
  KEEL_RETURN_IF_ERROR(ValidateObjectName(name));
  KEEL_ASSIGN_OR_RETURN(s3::HttpResponse response,
                        Send(Call{"DELETE", absl::StrCat(options_.prefix, name), {}, {}, ""}));
  if (response.status == 204 || response.status == 200 || response.status == 404) {
    return absl::OkStatus();
  }
  return UnexpectedAnswer("DELETE", name, response);
}

absl::StatusOr<std::vector<ObjectInfo>> S3ColdStore::List(absl::string_view prefix) {
  KEEL_RETURN_IF_ERROR(ValidateObjectPrefix(prefix));
  const std::string full_prefix = absl::StrCat(options_.prefix, prefix);
  std::vector<ObjectInfo> objects;
  std::string token;
  for (;;) {
    Call call{"GET", "", {}, {}, ""};
    call.query = {{"list-type", "2"},
                  {"prefix", full_prefix},
                  {"max-keys", absl::StrCat(options_.list_page_keys)}};
    if (!token.empty()) call.query.emplace_back("continuation-token", token);
    KEEL_ASSIGN_OR_RETURN(s3::HttpResponse response, Send(call));
    if (response.status != 200) return UnexpectedAnswer("LIST", prefix, response);
    KEEL_ASSIGN_OR_RETURN(s3::ListPage page, s3::ParseListObjectsV2(response.body));
    for (ObjectInfo& object : page.objects) {
      if (!absl::StartsWith(object.name, full_prefix)) {
        return absl::DataLossError(absl::StrCat("s3: listing '", full_prefix, "' in ", Describe(),
                                                " returned the key '", object.name, "'"));
      }
      object.name.erase(0, options_.prefix.size());
      // Keys no put of this store made (another tool's, in the same
      // bucket and prefix) are not objects of it.
      if (!ValidateObjectName(object.name).ok()) continue;
      objects.push_back(std::move(object));
    }
    if (!page.truncated) break;
    token = page.next_continuation_token;
  }
  return objects;
}

}  // namespace keel
