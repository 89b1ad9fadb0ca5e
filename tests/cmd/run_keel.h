// Runs the `keel` command line in-process (keel::cli::Main) and captures its
// exit code and output, for tests of the CLI.
#ifndef KEEL_TESTS_CMD_RUN_KEEL_H_
#define KEEL_TESTS_CMD_RUN_KEEL_H_

#include <sstream>
#include <string>
#include <vector>

#include "keel/cmd/keel/cli.h"

namespace keel::testing {

struct KeelRun {
  int code = -1;
  std::string out;
  std::string err;
};

// `args` are the arguments after the program name. They are owned here
// until Main returns, so callers may pass temporaries.
inline KeelRun RunKeel(std::vector<std::string> args) {
  args.insert(args.begin(), "keel");
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  KeelRun run;
  run.code = cli::Main(static_cast<int>(args.size()), argv.data(), out, err);
  run.out = out.str();
  run.err = err.str();
  return run;
}

}  // namespace keel::testing

#endif  // KEEL_TESTS_CMD_RUN_KEEL_H_
