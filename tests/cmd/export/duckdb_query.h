// Queries with DuckDB (npm @duckdb/node-api, which the ctest fixture
// `export_duckdb_install` installs into the build tree), as an analyst
// reads a lakehouse export: one `node query.mjs SQL` process per query.
#ifndef KEEL_TESTS_CMD_EXPORT_DUCKDB_QUERY_H_
#define KEEL_TESTS_CMD_EXPORT_DUCKDB_QUERY_H_

#include <boost/json.hpp>
#include <string>

#include "absl/status/statusor.h"

namespace keel::testing {

// The rows of `sql` as DuckDB's JSON objects; kInternal with DuckDB's
// message when the query fails.
absl::StatusOr<boost::json::array> DuckDbQuery(const std::string& sql);

// The single number a query such as "SELECT count(*) AS n ..." returns in
// column `column`.
absl::StatusOr<int64_t> DuckDbCount(const std::string& sql, const std::string& column = "n");

}  // namespace keel::testing

#endif  // KEEL_TESTS_CMD_EXPORT_DUCKDB_QUERY_H_
