#include "keel/tests/cmd/export/duckdb_query.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace keel::testing {
namespace {

// Everything `fd` yields until its end.
std::string ReadAll(int fd) {
  std::string out;
  char buffer[65536];
  while (true) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n > 0) {
      out.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      return out;
    }
  }
}

}  // namespace

absl::StatusOr<boost::json::array> DuckDbQuery(const std::string& sql) {
  const std::string script = std::string(KEEL_DUCKDB_DIR) + "/query.mjs";
  int out[2];
  if (pipe(out) != 0) return absl::InternalError("pipe failed");
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]);
    close(out[1]);
    execlp("node", "node", script.c_str(), sql.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(out[1]);
  const std::string text = ReadAll(out[0]);
  close(out[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat("DuckDB failed on: ", sql));
  }
  boost::system::error_code error;
  boost::json::value rows = boost::json::parse(text, error);
  if (error || !rows.is_array())
    return absl::InternalError("DuckDB printed no JSON array: " + text);
  return rows.as_array();
}

absl::StatusOr<int64_t> DuckDbCount(const std::string& sql, const std::string& column) {
  absl::StatusOr<boost::json::array> rows = DuckDbQuery(sql);
  if (!rows.ok()) return rows.status();
  if (rows->size() != 1 || !rows->at(0).is_object()) {
    return absl::InternalError("expected one row from: " + sql);
  }
  const boost::json::value* value = rows->at(0).as_object().if_contains(column);
  int64_t n = 0;
  if (value != nullptr && value->is_string() &&
      absl::SimpleAtoi(std::string(value->as_string()), &n))
    return n;
  if (value != nullptr && value->is_number()) return value->to_number<int64_t>();
  return absl::InternalError("no number in column " + column + " from: " + sql);
}

}  // namespace keel::testing
