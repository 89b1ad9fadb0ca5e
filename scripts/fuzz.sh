#!/usr/bin/env bash
# Builds Keel's libFuzzer targets (tests/fuzz/) with clang 14 in build-fuzz/
# and runs each one from its seed corpus (tests/fuzz/corpus/<target>/),
# then prints one line per target: runs, executions per second and the
# coverage reached (libFuzzer's cov: edges and ft: features). Exits non-zero
# when a target finds a crash, after saying where the input was saved.
#
#   scripts/fuzz.sh                     each target a fixed number of runs (CI)
#   scripts/fuzz.sh --seconds 600       each target for 10 minutes instead
#   scripts/fuzz.sh --runs 1000000      each target a million runs
#   scripts/fuzz.sh --target cursor_fuzzer [--target ...]   only these
#   scripts/fuzz.sh --build-only        build, run nothing
#
# New inputs a run finds are kept in build-fuzz/corpus/<target>/ (and used
# by the next run); crashes go to build-fuzz/artifacts/. Replay one with
# `build-fuzz/tests/fuzz/<target> <file>`.
set -euo pipefail
self=$(realpath "${BASH_SOURCE[0]}")
cd "$(dirname "$self")/.."

usage() { sed -n '2,17s/^# \{0,1\}//p' "$self"; }

# Runs per target in CI: each about 10 s on a busy 2-core machine (the
# request path, with a fresh bus per input, is by far the slowest).
declare -A ci_runs=(
  [cursor_fuzzer]=200000
  [policy_fuzzer]=50000
  [publish_body_fuzzer]=50000
  [stored_entry_fuzzer]=20000
  [segment_fuzzer]=50000
  [http_request_fuzzer]=2000
  [sse_start_fuzzer]=20000
)
all_targets=(cursor_fuzzer policy_fuzzer publish_body_fuzzer stored_entry_fuzzer
             segment_fuzzer http_request_fuzzer sse_start_fuzzer)

runs=""
seconds=""
build_only=false
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) [ $# -ge 2 ] || { usage >&2; exit 2; }; runs=$2; shift 2 ;;
    --seconds) [ $# -ge 2 ] || { usage >&2; exit 2; }; seconds=$2; shift 2 ;;
    --target) [ $# -ge 2 ] || { usage >&2; exit 2; }; targets+=("$2"); shift 2 ;;
    --build-only) build_only=true; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "fuzz.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  [ -n "${ci_runs[$t]:-}" ] || { echo "fuzz.sh: no target '$t' (${all_targets[*]})" >&2; exit 2; }
done

bash scripts/install-deps.sh

export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}

build=build-fuzz
mkdir -p "$build"
log="$build/fuzz-build.log"
echo "Building $build (clang 14, libFuzzer + ASan + UBSan, ${#targets[@]} targets; log: $log)"
start=$SECONDS
if ! { CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE= \
             -DKEEL_BUILD_TESTS=OFF -DKEEL_FUZZ=ON &&
       cmake --build "$build" --target "${targets[@]}"; } >"$log" 2>&1; then
  grep -E -B2 -A12 'error:|FAILED:|CMake Error' "$log" | head -n 200 || tail -n 100 "$log"
  echo "fuzz.sh: build failed (full log: $log)" >&2
  exit 1
fi
echo "built in $((SECONDS - start)) s"
$build_only && exit 0

# A finding must stop the target: UBSan's reports abort (as the build's
# -fno-sanitize-recover does), and ASan's leak check runs at exit.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

mkdir -p "$build/artifacts"
failed=()
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  mkdir -p "$corpus"
  if [ -n "$seconds" ]; then
    budget=(-max_total_time="$seconds")
  else
    budget=(-runs="${runs:-${ci_runs[$t]}}")
  fi
  run_log="$build/$t.log"
  started=$(date +%s%N)
  set +e
  "$build/tests/fuzz/$t" "${budget[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$t-" "$corpus" "tests/fuzz/corpus/$t" >"$run_log" 2>&1
  rc=$?
  set -e
  millis=$(( ($(date +%s%N) - started) / 1000000 ))
  # "#200000<TAB>DONE   cov: 412 ft: 1289 corp: 96/3112b lim: 4096 exec/s: 25000 rss: 40Mb"
  last=$(grep -a -E '^#[0-9]+[[:space:]]+(DONE|pulse|NEW|REDUCE|INITED)' "$run_log" | tail -n 1 || true)
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
  execs=$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+).*/\1/p' "$run_log" | tail -n 1)
  # Over the whole run, start-up and the corpus's first pass included
  # (libFuzzer's own figure rounds a run under a second down to 0).
  per_second=$(( ${execs:-0} * 1000 / (millis > 0 ? millis : 1) ))
  printf '%-20s %9s runs %7s exec/s  cov: %-5s ft: %-6s %4d.%d s\n' "$t" "${execs:-?}" \
    "$per_second" "${cov:-?}" "${ft:-?}" $((millis / 1000)) $((millis % 1000 / 100))
  if [ "$rc" -ne 0 ]; then
    grep -a -E -A30 'breaks the rule|ERROR: |runtime error|deadly signal' "$run_log" |
      head -n 60 || tail -n 60 "$run_log"
    grep -a -E 'Test unit written to' "$run_log" || true
    failed+=("$t")
  fi
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: ${#failed[@]} target(s) found a crash: ${failed[*]} (logs: $build/<target>.log)" >&2
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets ran without a finding"
