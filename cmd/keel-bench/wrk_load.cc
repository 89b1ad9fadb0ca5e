#include "keel/cmd/keel-bench/wrk_load.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "keel/cmd/keel-bench/bench_process.h"
#include "keel/core/status_macros.h"

namespace keel::bench {
namespace {

// A Lua long string cannot hold "]==]"; a JSON body never needs it.
absl::StatusOr<std::string> WriteScript(const WrkOptions& o) {
  if (o.body.find("]==]") != std::string::npos) {
    return absl::InvalidArgumentError("wrk body must not contain ']==]'");
  }
  const std::string path = (std::filesystem::path(o.script_dir) / "post.lua").string();
  std::ofstream script(path, std::ios::trunc);
  script << "wrk.method = \"POST\"\n"
         << "wrk.headers[\"Content-Type\"] = \"application/json\"\n"
         << "wrk.body = [==[" << o.body << "]==]\n";
  script.close();
  if (!script) return absl::InternalError(absl::StrCat("cannot write ", path));
  return path;
}

// "1.23k" / "456" / "2.5M" as wrk prints counts.
uint64_t Count(const std::string& text) {
  double value = 0;
  if (!absl::SimpleAtod(text, &value)) return 0;
  return static_cast<uint64_t>(value);
}

}  // namespace

absl::StatusOr<WrkResult> ParseWrkOutput(const std::string& output) {
  WrkResult result;
  std::smatch m;
  // "  123456 requests in 6.00s, 21.55MB read"
  static const std::regex kTotals(R"((\d+) requests in ([0-9.]+)(m?s))");
  if (!std::regex_search(output, m, kTotals)) {
    return absl::InternalError(
        absl::StrCat("no 'requests in' in wrk output: ", output.substr(0, 500)));
  }
  result.requests = Count(m[1]);
  double seconds = 0;
  if (!absl::SimpleAtod(std::string(m[2]), &seconds)) {
    return absl::InternalError(absl::StrCat("cannot parse wrk duration '", std::string(m[2]), "'"));
  }
  result.seconds = m[3] == "ms" ? seconds / 1000 : seconds;
  static const std::regex kBad(R"(Non-2xx or 3xx responses: (\d+))");
  if (std::regex_search(output, m, kBad)) result.bad_responses = Count(m[1]);
  static const std::regex kSocket(
      R"(Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+))");
  if (std::regex_search(output, m, kSocket)) {
    for (int i = 1; i <= 4; ++i) result.socket_errors += Count(m[i]);
  }
  return result;
}

absl::StatusOr<WrkResult> RunWrk(const WrkOptions& o) {
  KEEL_ASSIGN_OR_RETURN(const std::string script, WriteScript(o));
  const std::vector<std::string> argv = {
      o.wrk_path,
      "-t",
      absl::StrCat(o.threads),
      "-c",
      absl::StrCat(o.connections),
      "-d",
      absl::StrCat(std::max(1, static_cast<int>(o.seconds + 0.5)), "s"),
      "-s",
      script,
      o.url};
  const double cpu_before = ReapedChildrenCpuSeconds();
  KEEL_ASSIGN_OR_RETURN(RunOutput run, RunAndCapture(argv));
  if (run.exit_code != 0) {
    return absl::InternalError(
        absl::StrCat("wrk exited ", run.exit_code, ": ", run.output.substr(0, 500)));
  }
  KEEL_ASSIGN_OR_RETURN(WrkResult result, ParseWrkOutput(run.output));
  result.client_cpu_seconds = ReapedChildrenCpuSeconds() - cpu_before;
  return result;
}

}  // namespace keel::bench
