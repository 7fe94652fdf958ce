"""Read thresher's Parquet and JSON Lines exports with independent readers (pyarrow, Python's
json and gzip) and compare them with what the store holds.

python3 read_back.py EXPORT.parquet EXPORT.jsonl EXPORT.jsonl.gz STORE.json FIELDS

STORE.json: a list of {"id", "url", "host", "text"} in export order, written by the Rust test
from the store. FIELDS: the comma-separated --fields the exports were made with. Exits non-zero
with a message on the first difference.
"""

import gzip
import json
import sys

import pyarrow as pa
import pyarrow.parquet as pq

TYPES = {
    "cluster": pa.uint32(),
    "lang_confidence": pa.float64(),
    "template_ratio": pa.float64(),
}
REQUIRED = {"id", "url", "host", "fetched_at", "cluster", "text"}


def fail(msg):
    print(f"read_back.py: {msg}", file=sys.stderr)
    sys.exit(1)


def main():
    parquet_path, jsonl_path, gz_path, store_path, fields = sys.argv[1:6]
    fields = fields.split(",")
    pf = pq.ParquetFile(parquet_path)
    table = pf.read()
    if table.schema.names != fields:
        fail(f"parquet columns {table.schema.names} != --fields {fields}")
    for field in table.schema:
        want = TYPES.get(field.name, pa.string())
        if field.type != want:
            fail(f"column {field.name}: type {field.type}, expected {want}")
        if field.nullable == (field.name in REQUIRED):
            fail(f"column {field.name}: nullable={field.nullable}")
    rows = table.to_pylist()
    with open(jsonl_path, encoding="utf-8") as f:
        lines = [json.loads(line) for line in f]
    with gzip.open(gz_path, "rt", encoding="utf-8") as f:
        gz_lines = [json.loads(line) for line in f]
    with open(store_path, encoding="utf-8") as f:
        store = json.load(f)
    if not (len(rows) == len(lines) == len(gz_lines) == len(store)):
        fail(f"rows: parquet {len(rows)}, jsonl {len(lines)}, gz {len(gz_lines)}, store {len(store)}")
    for i, (row, line, gz, page) in enumerate(zip(rows, lines, gz_lines, store)):
        if list(line.keys()) != fields:
            fail(f"row {i}: jsonl keys {list(line.keys())} != {fields}")
        if row != line:
            fail(f"row {i}: parquet {row!r} != jsonl {line!r}")
        if gz != line:
            fail(f"row {i}: jsonl.gz differs from jsonl")
        for key in ("id", "url", "host", "text"):
            if key in row and row[key] != page[key]:
                fail(f"row {i}: {key} {row[key]!r} != store {page[key]!r}")
    print(
        f"read_back.py: pyarrow {pa.__version__}: {len(rows)} rows, {len(fields)} fields, "
        f"{pf.metadata.num_row_groups} row group(s): parquet = jsonl = jsonl.gz = store"
    )


if __name__ == "__main__":
    main()
