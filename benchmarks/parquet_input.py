"""The benchmark's Parquet input mode (``bench_corpus.py --parquet``): the generated JSON-lines
dumps rewritten as the Parquet mirror ``open-index/arctic`` lays them out
(``data/comments/YYYY/MM/000.parquet``, ``data/submissions/...``: one column per dump field,
zstd, row groups of 50,000 rows), and the dataset files of two builds compared."""

from __future__ import annotations

import os
import time

ROW_GROUP = 50_000
BATCH = 50_000


def _records(path: str):
    """The parsed records of a generated zstd JSON-lines dump, in order."""
    import orjson
    import zstandard

    rest = b""
    with open(path, "rb") as fh, zstandard.ZstdDecompressor(max_window_size=2**31).stream_reader(fh) as reader:
        while chunk := reader.read(16 << 20):
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            yield from (orjson.loads(line) for line in lines if line)
    if rest.strip():
        yield orjson.loads(rest)


def _schema(rows: list):
    """The Arrow schema of the first batch, without the fields Parquet cannot store (an always
    empty object such as ``gildings: {}`` is a struct without fields)."""
    import pyarrow as pa

    names = list(dict.fromkeys(key for row in rows for key in row))
    table = pa.table({name: [row.get(name) for row in rows] for name in names})
    keep = [f for f in table.schema if not (pa.types.is_struct(f.type) and f.type.num_fields == 0)
            and not pa.types.is_null(f.type)]
    return pa.schema(keep)


def to_arctic(dump: str, folder: str) -> str:
    """Rewrite one generated dump (``RS_*`` submissions, ``RC_*`` comments) as one shard in the
    open-index/arctic layout under ``folder``; returns its path."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    kind = "submissions" if os.path.basename(dump).startswith("RS_") else "comments"
    writer, path, batch = None, None, []

    def flush():
        nonlocal writer, path
        if writer is None:
            schema = _schema(batch)
            month = time.strftime("%Y/%m", time.gmtime(int(float(batch[0]["created_utc"]))))
            path = os.path.join(folder, "data", kind, month, "000.parquet")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            writer = pq.ParquetWriter(path, schema, compression="zstd")
        columns = {f.name: [row.get(f.name) for row in batch] for f in writer.schema}
        writer.write_table(pa.table(columns, schema=writer.schema), row_group_size=ROW_GROUP)

    for record in _records(dump):
        record["created_utc"] = int(float(record["created_utc"]))  # a typed mirror's int64 column
        batch.append(record)
        if len(batch) == BATCH:
            flush()
            batch = []
    if batch:
        flush()
    writer.close()
    return path


def dataset_files_differ(first: dict, second: dict) -> list:
    """Of two ``output_digests``, the single_turn / multi_turn files that differ (the card and
    the stats name the inputs, so they differ by design)."""
    keys = {k for k in set(first) | set(second) if k.startswith(("single_turn", "multi_turn"))}
    return sorted(k for k in keys if first.get(k) != second.get(k))


def shard_count(digests: dict) -> int:
    """The shards per split of a build, from its ``output_digests`` (``single_turn/train-00000-of-00011.parquet``)."""
    name = next(k for k in sorted(digests) if k.startswith("single_turn/train-"))
    return int(name.rsplit("-of-", 1)[1].split(".")[0])
