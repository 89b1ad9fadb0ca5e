// keel-bench: Keel's benchmarks as a program of their own, outside the
// `keel` command and every library a host program links (as LevelDB keeps
// db_bench), so that no program built on Keel carries a Redis harness or a
// raw LevelDB baseline:
//
//   keel-bench <mode> [options]     storage, http, sse or jetstream (bench_mode.h)
//   keel-bench --help               the modes
//   keel-bench <mode> --help        a mode's options
//
// Options come from flags first, then from the file named by `--config`
// (`key = value` lines), so flags override the file.
//
// Main never throws; it returns the process exit code (the mode's, or
// kExitUsage for a bad command line) and writes to the given streams.
//
// Thread safety: Main may run on any thread; a mode may start its own.
#ifndef KEEL_CMD_KEEL_BENCH_BENCH_MAIN_H_
#define KEEL_CMD_KEEL_BENCH_BENCH_MAIN_H_

#include <iosfwd>

namespace keel::bench {

int Main(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace keel::bench

#endif  // KEEL_CMD_KEEL_BENCH_BENCH_MAIN_H_
