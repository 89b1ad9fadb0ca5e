// BenchMode: one mode of `keel-bench` (storage, http, sse, jetstream, push,
// cold, export).
//
// `keel-bench <mode> [options]` prints measured figures next to a baseline
// measured in the same run, the ratio and the target, and PASS/MISS against
// the target. It never asserts speed: a miss is printed, not an error. A mode
// returns non-zero only when it could not run (bad options, I/O errors, or
// results that are wrong rather than slow).
//
// Adding a mode: implement BenchMode in its own file (e.g. http_bench.cc),
// declare its factory below and add it to BenchModes() in bench_main.cc.
// A mode is parsed with its own options only, so it declares every flag it
// reads, the generic ones (--quick, --dir, --keep) included; keep those
// generic flags' meaning and type the same in every mode.
//
// Thread safety: created and run on one thread; a mode may start its own.
#ifndef KEEL_CMD_KEEL_BENCH_BENCH_MODE_H_
#define KEEL_CMD_KEEL_BENCH_BENCH_MODE_H_

#include <iosfwd>
#include <memory>
#include <vector>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/variables_map.hpp>

#include "absl/strings/string_view.h"

namespace keel::bench {

namespace po = boost::program_options;

// Where a mode writes its figures (out) and its errors (err).
struct BenchIo {
  std::ostream& out;
  std::ostream& err;
};

// Exit codes; a mode may return others of its own (http: 77, the baseline
// is missing).
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

class BenchMode {
 public:
  virtual ~BenchMode() = default;
  virtual absl::string_view name() const = 0;
  virtual absl::string_view summary() const = 0;
  virtual void AddOptions(po::options_description& options) const = 0;
  // Returns an exit code (kExitOk, kExitFailure, kExitUsage).
  virtual int Run(const po::variables_map& vars, BenchIo& io) const = 0;
};

std::unique_ptr<BenchMode> NewStorageBench();    // storage_bench.cc
std::unique_ptr<BenchMode> NewHttpBench();       // http_bench.cc
std::unique_ptr<BenchMode> NewSseBench();        // sse_bench.cc
std::unique_ptr<BenchMode> NewJetStreamBench();  // jetstream_bench.cc
std::unique_ptr<BenchMode> NewPushBench();       // push_bench.cc
std::unique_ptr<BenchMode> NewColdBench();       // cold_bench.cc
std::unique_ptr<BenchMode> NewExportBench();     // export_bench.cc

// Every mode, in the order `keel-bench --help` lists them.
std::vector<std::unique_ptr<BenchMode>> BenchModes();

}  // namespace keel::bench

#endif  // KEEL_CMD_KEEL_BENCH_BENCH_MODE_H_
