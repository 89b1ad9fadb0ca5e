// keel_cli: the `keel` command line as a library, so that host programs can
// run it with their own drivers registered:
//
//   int main(int argc, char** argv) { return keel::cli::Main(argc, argv); }
//
// Main never throws; it returns the process exit code (0 success, 1 runtime
// failure, 2 usage error) and writes to the given streams.
//
// Thread safety: Main may run on any thread; commands that serve (daemon)
// block until stopped.
#ifndef KEEL_CMD_KEEL_CLI_H_
#define KEEL_CMD_KEEL_CLI_H_

#include <iosfwd>

namespace keel::cli {

int Main(int argc, const char* const* argv);
int Main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace keel::cli

#endif  // KEEL_CMD_KEEL_CLI_H_
