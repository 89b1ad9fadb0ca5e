// BenchMode: one mode of `keel bench` (storage today; http and sse later).
//
// `keel bench <mode> [options]` prints measured figures next to a baseline
// measured in the same run, the ratio and the target, and PASS/MISS against
// the target. It never asserts speed: a miss is printed, not an error. A mode
// returns non-zero only when it could not run (bad options, I/O errors, or
// results that are wrong rather than slow).
//
// Adding a mode: implement BenchMode in its own file (e.g. http_bench.cc),
// declare its factory below and add it to BenchModes() in bench_command.cc.
// Each mode registers its options in its own group; option names must not
// clash across modes, so prefix mode-specific ones when they could. A few
// generic flags (--quick, --dir, --keep) are meant to be shared: a mode may
// declare them too, and `keel bench` registers each name once (the first
// mode's declaration wins, so keep their types the same).
//
// Thread safety: created and run on one thread; a mode may start its own.
#ifndef KEEL_CMD_KEEL_BENCH_BENCH_MODE_H_
#define KEEL_CMD_KEEL_BENCH_BENCH_MODE_H_

#include <memory>
#include <vector>

#include "absl/strings/string_view.h"
#include "cmd/keel/command.h"

namespace keel::cli::bench {

class BenchMode {
 public:
  virtual ~BenchMode() = default;
  virtual absl::string_view name() const = 0;
  virtual absl::string_view summary() const = 0;
  virtual void AddOptions(po::options_description& options) const = 0;
  // Returns an exit code (kExitOk, kExitFailure, kExitUsage).
  virtual int Run(const po::variables_map& vars, CommandIo& io) const = 0;
};

std::unique_ptr<BenchMode> NewStorageBench();
std::unique_ptr<BenchMode> NewHttpBench();  // http_bench.cc
std::unique_ptr<BenchMode> NewSseBench();   // sse_bench.cc

// Every mode, in the order `keel bench --help` lists them.
std::vector<std::unique_ptr<BenchMode>> BenchModes();

}  // namespace keel::cli::bench

#endif  // KEEL_CMD_KEEL_BENCH_BENCH_MODE_H_
