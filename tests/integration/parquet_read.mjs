// parquet_read.mjs - reads Parquet files with Apache Arrow's Rust reader
// (parquet-wasm, from npm/; a reader other than DuckDB's) and prints, as
// JSON, each file's rows and, per column, its type, its NULLs and the sum
// of its numbers or of its strings' UTF-8 bytes: what the tests compare
// with DuckDB's reading of the same files.
//
// Usage: node parquet_read.mjs FILE...
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../../npm/package.json"));
const { readParquet } = require("parquet-wasm");
const { tableFromIPC } = require("apache-arrow");

const utf8 = new TextEncoder();
const files = {};
for (const file of process.argv.slice(2)) {
  const table = tableFromIPC(readParquet(new Uint8Array(readFileSync(file))).intoIPCStream());
  const columns = {};
  for (const field of table.schema.fields) {
    let nulls = 0, sum = 0n;
    for (const v of table.getChild(field.name)) {
      if (v === null) nulls++;
      else if (typeof v === "string") sum += BigInt(utf8.encode(v).length);
      else sum += BigInt(v);
    }
    columns[field.name] = { type: String(field.type), nulls, sum: String(sum) };
  }
  files[file] = { rows: table.numRows, columns };
}
console.log(JSON.stringify(files));
