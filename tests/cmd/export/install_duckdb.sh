#!/usr/bin/env bash
# Installs DuckDB for Node (npm @duckdb/node-api, whose bindings package
# carries libduckdb with its json reader; no download at run time) into
# DEST, at the versions of package-lock.json beside this script, with the
# query script the export tests run. Run by ctest as the setup of the tests
# that query exports. Does nothing when DEST already holds this lock's
# install.
#
#   install_duckdb.sh DEST
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dest=${1:?usage: install_duckdb.sh DEST}
mkdir -p "$dest"
cp "$here/duckdb/query.mjs" "$dest/"
if [ -d "$dest/node_modules/@duckdb/node-api" ] && cmp -s "$here/duckdb/package-lock.json" "$dest/package-lock.json"; then
  exit 0
fi
command -v npm >/dev/null || { echo "install_duckdb.sh: npm is missing (scripts/install-deps.sh installs it)" >&2; exit 1; }
cp "$here/duckdb/package.json" "$here/duckdb/package-lock.json" "$dest/"
cd "$dest"
npm ci --no-audit --no-fund --loglevel=error
node -e "require.resolve('@duckdb/node-api')" >/dev/null 2>&1 || test -d node_modules/@duckdb/node-api
echo "DuckDB for Node installed in $dest"
