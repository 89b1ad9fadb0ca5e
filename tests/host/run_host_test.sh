#!/usr/bin/env bash
# The `host_program` test: proves that an installed Keel can be used from a
# project of its own.
#
#   run_host_test.sh <keel-build-dir> <keel-source-dir>
#
# 1. `cmake --install` the (already built) Keel build into a scratch prefix,
#    <build>/tests/host/prefix, wiped first so nothing stale is found;
# 2. configure tests/host as a standalone project with
#    -DCMAKE_PREFIX_PATH=<prefix> (and the Keel build's compiler, build type,
#    compiler launcher and sanitizers), check that find_package(Keel) resolved
#    to that prefix, and build it in <build>/tests/host/standalone (kept, so a
#    rerun is incremental);
# 3. run its tests: the conformance suite on `host-journal` and the keel-host
#    CLI checks.
set -euo pipefail

if [ $# -ne 2 ]; then
  echo "usage: $0 <keel-build-dir> <keel-source-dir>" >&2
  exit 2
fi
build=$(realpath "$1")
src=$(realpath "$2")
work="$build/tests/host"
prefix="$work/prefix"
host_build="$work/standalone"
mkdir -p "$work"

cache_get() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt" | head -n 1; }

# Runs a step quietly; on failure shows its log and stops.
step() {
  local name=$1
  shift
  echo "== $name"
  if ! "$@" >"$work/$name.log" 2>&1; then
    cat "$work/$name.log"
    echo "host_program: step '$name' failed (log: $work/$name.log)" >&2
    exit 1
  fi
}

rm -rf "$prefix"
step install cmake --install "$build" --prefix "$prefix"

# The install holds the public headers alone: each includes only installed
# headers, and none of the server, client, benchmarks or driver internals.
include_dir="$prefix/include"
while IFS= read -r header; do
  while IFS= read -r included; do
    if [ ! -f "$include_dir/$included" ]; then
      echo "host_program: installed ${header#"$include_dir"/} includes $included, which is not installed" >&2
      exit 1
    fi
  done < <(sed -n 's/^#include "\(keel\/[^"]*\)".*/\1/p' "$header")
done < <(find "$include_dir/keel" -name '*.h')
for private in cmd/keel/server cmd/keel/client cmd/keel-bench drivers/durable drivers/memory \
               statestore/leveldb statestore/memory; do
  if [ -e "$include_dir/keel/$private" ]; then
    echo "host_program: private headers installed: include/keel/$private" >&2
    exit 1
  fi
done
echo "   $(find "$include_dir/keel" -name '*.h' | wc -l) public headers installed, closed under #include"

args=(
  -G "$(cache_get CMAKE_GENERATOR)"
  -DCMAKE_PREFIX_PATH="$prefix"
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  -DCMAKE_CXX_COMPILER="$(cache_get CMAKE_CXX_COMPILER)"
  -DCMAKE_BUILD_TYPE="$(cache_get CMAKE_BUILD_TYPE)"
  -DCMAKE_CXX_COMPILER_LAUNCHER="$(cache_get CMAKE_CXX_COMPILER_LAUNCHER)"
)
sanitize=$(cache_get KEEL_SANITIZE)
if [ -n "$sanitize" ]; then
  # A sanitized Keel needs the sanitizer runtime in every binary linking it.
  args+=(-DCMAKE_CXX_FLAGS="-fsanitize=$sanitize -fno-omit-frame-pointer -g"
         -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=$sanitize")
fi
step configure cmake -S "$src/tests/host" -B "$host_build" "${args[@]}"

keel_dir=$(sed -n 's/^Keel_DIR:PATH=//p' "$host_build/CMakeCache.txt")
case "$keel_dir" in
  "$prefix"/*) echo "   find_package(Keel) -> $keel_dir" ;;
  *) echo "host_program: find_package(Keel) found '$keel_dir', not the installed $prefix" >&2
     exit 1 ;;
esac

step build cmake --build "$host_build" -j2
echo "== test"
ctest --test-dir "$host_build" --output-on-failure
