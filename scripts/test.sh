#!/usr/bin/env bash
# Installs missing Debian packages, builds Keel and its tests, runs every test
# and prints one summary line: "N passed, M failed". Exits non-zero on any
# failure.
#
#   scripts/test.sh                                 Debug build in build-debug/
#   scripts/test.sh --sanitize address,undefined    ASan+UBSan build in build-asan/
#   scripts/test.sh --sanitize thread               TSan build in build-tsan/
#   scripts/test.sh [...] -- -R conformance         extra arguments go to ctest
#
# Build directories are reused, so a rerun only rebuilds what changed. Build
# and configure output goes to <build dir>/test-build.log and is shown only
# when something fails; ctest's output is shown for failed tests only. Each
# test without a TIMEOUT of its own gets KEEL_TEST_TIMEOUT seconds (120).
set -euo pipefail
self=$(realpath "${BASH_SOURCE[0]}")
cd "$(dirname "$self")/.."

usage() { sed -n '2,15s/^# \{0,1\}//p' "$self"; }

sanitize=""
ctest_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sanitize) [ $# -ge 2 ] || { usage >&2; exit 2; }; sanitize=$2; shift 2 ;;
    --sanitize=*) sanitize=${1#--sanitize=}; shift ;;
    -h|--help) usage; exit 0 ;;
    --) shift; ctest_args=("$@"); break ;;
    *) echo "test.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
  esac
done

case "$sanitize" in
  "") build=build-debug ;;
  address,undefined|undefined,address) sanitize=address,undefined; build=build-asan ;;
  thread) build=build-tsan ;;
  *) echo "test.sh: --sanitize takes 'address,undefined' or 'thread', not '$sanitize'" >&2
     exit 2 ;;
esac

bash scripts/install-deps.sh

# ccache (used by CMake when installed): share cached objects between build
# directories of this checkout (build/, build-debug/, ...).
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}

mkdir -p "$build"
log="$build/test-build.log"
echo "Building $build (Debug${sanitize:+, sanitize=$sanitize}; log: $log)"
if ! { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DKEEL_BUILD_TESTS=ON \
             -DKEEL_SANITIZE="$sanitize" &&
       cmake --build "$build"; } >"$log" 2>&1; then
  if grep -q -E 'error:|FAILED:|CMake Error' "$log"; then
    grep -E -B2 -A12 'error:|FAILED:|CMake Error' "$log" | head -n 200 || true
  else
    tail -n 100 "$log"
  fi
  echo "test.sh: build failed, no test ran (full log: $log)" >&2
  exit 1
fi

# Sanitizer reports fail the test that triggers them.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/scripts/tsan.supp}

# The soak checks that the daemon's memory stays flat, which it does not
# under a sanitizer (ASan keeps freed memory in quarantine, TSan its shadow
# state): the plain build runs it; its loss checks are the crash loop's,
# which every build runs.
label_args=()
[ -z "$sanitize" ] || label_args=(-LE soak)

ctest_log="$build/ctest.log"
set +e
ctest --test-dir "$build" --output-on-failure -j2 --timeout "${KEEL_TEST_TIMEOUT:-120}" \
      "${label_args[@]}" "${ctest_args[@]}" 2>&1 |
  tee "$ctest_log" |
  grep -v -E '^ *Start +[0-9]+: |^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* +Passed +[0-9.]+ sec$|^Internal ctest changing'
ctest_rc=${PIPESTATUS[0]}
set -e

# "97% tests passed, 2 tests failed out of 64" (tests that did not run, i.e.
# disabled ones, are in neither number; ctest lists them above).
summary=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$ctest_log" | tail -n 1)
if [[ $summary =~ ([0-9]+)\ tests?\ failed\ out\ of\ ([0-9]+) ]]; then
  failed=${BASH_REMATCH[1]}
  total=${BASH_REMATCH[2]}
else
  echo "test.sh: ctest ran no tests (exit $ctest_rc; log: $ctest_log)" >&2
  failed=0
  total=0
  [ "$ctest_rc" -ne 0 ] || ctest_rc=1
fi
echo "$((total - failed)) passed, $failed failed"
[ "$ctest_rc" -eq 0 ] && [ "$failed" -eq 0 ]
