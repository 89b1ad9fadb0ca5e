#!/usr/bin/env bash
# Installs the npm package s3rver (an S3-compatible server, for the s3 cold
# store's tests) into DEST, at the versions of package-lock.json beside
# this script. Run by ctest as the setup of the tests that start it. Does
# nothing when DEST already holds this lock's install.
#
#   install_s3rver.sh DEST
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dest=${1:?usage: install_s3rver.sh DEST}
mkdir -p "$dest"
if [ -x "$dest/node_modules/.bin/s3rver" ] && cmp -s "$here/s3rver/package-lock.json" "$dest/package-lock.json"; then
  exit 0
fi
command -v npm >/dev/null || { echo "install_s3rver.sh: npm is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
cp "$here/s3rver/package.json" "$here/s3rver/package-lock.json" "$dest/"
cd "$dest"
npm ci --no-audit --no-fund --loglevel=error
test -x node_modules/.bin/s3rver
echo "s3rver installed in $dest"
