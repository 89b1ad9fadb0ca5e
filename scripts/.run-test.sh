#!/usr/bin/env bash
# Set up and start Keel: installs missing Debian packages, builds Release into
# build/ and runs `keel daemon` with its defaults (arguments are passed on,
# e.g. `scripts/run.sh --listen 127.0.0.1:9090`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh

# ccache (used by CMake when installed): share cached objects between build
# directories of this checkout (build/, build-debug/, ...).
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}

build=build-runtest
log="$build/run-build.log"
mkdir -p "$build"
# Quiet unless something fails.
if ! { cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKEEL_BUILD_TESTS=OFF &&
       cmake --build "$build" --target keel; } >"$log" 2>&1; then
  cat "$log"
  echo "run.sh: build failed (log: $log)" >&2
  exit 1
fi

exec "$build/cmd/keel/keel" daemon "$@"
