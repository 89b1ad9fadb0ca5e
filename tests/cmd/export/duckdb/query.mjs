// Runs one SQL query with DuckDB and prints its rows as one JSON array
// (numbers as JSON numbers or strings, as DuckDB's JSON form gives them).
// Exits 1 with the error on stderr when the query fails.
//
//   node query.mjs "SELECT count(*) AS n FROM read_json_auto('lake/**/*.jsonl')"
import { DuckDBInstance } from '@duckdb/node-api';

const instance = await DuckDBInstance.create(':memory:');
const connection = await instance.connect();
try {
  const reader = await connection.runAndReadAll(process.argv[2]);
  process.stdout.write(JSON.stringify(reader.getRowObjectsJson()) + '\n');
} catch (error) {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
}
