#!/usr/bin/env bash
# Installs the Debian 12 packages Keel needs to build, run and test.
# Idempotent and quiet: when every package is present it prints nothing and
# touches no package list.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  libboost1.81-dev libboost-program-options1.81-dev libboost-json1.81-dev
  libboost-url1.81-dev
  libabsl-dev libleveldb-dev libsnappy-dev libssl-dev libzstd-dev
  libprotobuf-dev protobuf-compiler libspdlog-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  nats-server libnats-dev
  chromium redis-server redis-tools curl openssl
  # keel-bench http: a third-party HTTP load generator beside Keel's own.
  wrk
  # scripts/fuzz.sh: clang 14 and its runtimes (libFuzzer, ASan, UBSan).
  clang-14 libclang-rt-14-dev
)

# npm installs test-only clients into the build tree (the s3 cold store's
# tests run the npm package s3rver). A machine whose Node.js comes with its
# own npm has no Debian npm package: only a missing command asks for one.
command -v npm >/dev/null || packages+=(nodejs npm)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "Installing: ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
