"""Parquet mirrors of the Reddit dumps as input: the monthly shards of the Hugging Face dataset
``open-index/arctic`` (``data/comments/YYYY/MM/NNN.parquet``, ``data/submissions/...``; one
column per field of the dumps' JSON records), local files or ``hf://datasets/...`` paths.

:func:`read_items` yields the items of :func:`lsdscc.corpus.sources.read_items` (``("ok", row,
record, None)``, ``("rejected", ...)``, ``("skipped", n)``), so the rest of the corpus job
cannot tell a row from a JSON line: the same records give the same dataset bytes.

- **Projection**: only the columns the corpus reads (:data:`COLUMNS`) are decoded.
- **Subreddit filter, before any row becomes a Python dict**: a row group whose ``subreddit``
  min/max statistics leave out every wanted name is skipped unread; otherwise the column is
  read dictionary-encoded and compared (lowercased, :mod:`pyarrow.compute`) on its dictionary;
  the other columns of the group are read only when a row is wanted. Rows of other subreddits
  are ``("skipped", n)``, counted as ``dropped-other-subreddit`` as the JSON prefilter counts
  them. A null or non-ASCII ``subreddit`` always takes the exact path (``normalize``).
- **Time range**: the range selects threads by their submission's time, or by the earliest
  comment's when the submission is missing (:mod:`lsdscc.corpus.eras`), so a post older than
  ``--since`` must still be read: it is what puts its thread out of range. Only ``--until`` is
  pushed down, for submissions: one created after ``until`` puts its thread out of range, and
  so would its comments without it (a comment is never older than its submission). Those rows
  are skipped before conversion as ``("skipped", n, "out-of-range")``.
- **Values as JSON gives them**: a null is a missing key (as in a dump line without the field),
  a struct or map (``_meta``) a dict, a ``_meta`` stored as JSON text is parsed, a timestamp
  ``created_utc`` whole epoch seconds; integers stay ints.
- **Hostile files**: an unreadable footer or page is one ``corrupt-file`` rejection naming the
  file (rows read before it are kept); a missing ``subreddit`` / ``created_utc`` column or a
  column of a type no dump field has is one ``bad-parquet-schema`` rejection. Never a traceback.
- **Digests**: with ``tap`` (:meth:`lsdscc.corpus.provenance.FileTally.tap`) the stored file is
  read once front to back to hash it (Parquet is read by seeking, so the digest cannot ride on
  the column reads); part 0 of a file does it. A local file is then read from disk again (the
  page cache usually holds it); an ``hf://`` file is kept in memory from that pass, so it is
  downloaded once (a shard of the mirror is some tens of MB).
- ``hf://datasets/OWNER/NAME/...`` paths and globs are read through ``huggingface_hub``'s
  ``HfFileSystem`` (network; a token from ``HF_TOKEN`` or ``huggingface-cli login`` if the
  dataset is gated).
"""

from __future__ import annotations

import functools
import glob
import inspect
import json
import os
from typing import Iterator

from lsdscc.corpus.records import CREATED_RANGE
from multiref.util.errors import UserError
from multiref.util.location import is_remote

MAGIC = b"PAR1"
#: The dump fields the corpus reads (lsdscc.corpus.records.normalize, lsdscc.corpus.deletions):
#: the only columns decoded.
COLUMNS = ("id", "name", "subreddit", "created_utc", "created", "body", "parent_id", "link_id", "title",
           "selftext", "author", "_meta")
_TEXT = frozenset(COLUMNS) - {"created_utc", "created", "_meta"}
#: Where Parquet files are looked for in an ``--input`` folder (the open-index/arctic layout).
LAYOUT = ("*.parquet", "comments/**/*.parquet", "submissions/**/*.parquet", "data/comments/**/*.parquet",
          "data/submissions/**/*.parquet")
_HASH_BLOCK = 1 << 20
#: Rows decoded at a time (all projected columns) once a row group holds a wanted row.
BATCH_ROWS = 8_192


def is_hf(path: str) -> bool:
    return path.startswith("hf://")


def is_parquet(path: str) -> bool:
    """A ``.parquet`` name, or a local regular file starting with Parquet's magic ``PAR1``."""
    if path.lower().endswith(".parquet"):
        return True
    if is_remote(path) or not os.path.isfile(path):
        return False
    try:
        with open(path, "rb") as fh:
            return fh.read(4) == MAGIC
    except OSError:
        return False


def parquet_files_in(folder: str) -> list[str]:
    """The Parquet files of a folder laid out as :data:`LAYOUT` says, sorted."""
    found = set()
    for pattern in LAYOUT:
        found.update(p for p in glob.glob(os.path.join(folder, pattern), recursive=True) if os.path.isfile(p))
    return sorted(found)


def _hf_fs():
    from huggingface_hub import HfFileSystem

    return HfFileSystem()


def match_hf(pattern: str) -> list[str]:
    """The Parquet files an ``hf://`` path, folder or glob names, sorted (network).
    UserError when nothing matches or the Hub cannot be reached."""
    fs = _hf_fs()
    try:
        if any(ch in pattern for ch in "*?["):
            found = fs.glob(pattern)
        elif fs.isdir(pattern):
            found = [p for layout in LAYOUT for p in fs.glob(pattern.rstrip("/") + "/" + layout)]
        else:
            found = [pattern]
    except Exception as exc:  # noqa: BLE001 - offline, unknown repo, gated: httpx / hub errors, not only OSError
        raise UserError(f"cannot list {pattern} on the Hugging Face Hub: {type(exc).__name__}: {str(exc)[:200]}") \
            from None
    files = sorted({"hf://" + p.removeprefix("hf://") for p in found if p.endswith(".parquet")})
    if not files:
        raise UserError(f"no Parquet files match {pattern}")
    return files


def hf_sizes(patterns) -> dict:
    """``{hf:// path: size in bytes}`` of the files ``patterns`` name (network; see :func:`match_hf`)."""
    if not patterns:
        return {}
    files = [path for pattern in patterns for path in match_hf(pattern)]
    try:
        fs = _hf_fs()
        return {path: fs.info(path)["size"] for path in files}
    except Exception as exc:  # noqa: BLE001 - as in match_hf
        raise UserError(f"cannot read the sizes of {patterns[0]} on the Hugging Face Hub: {exc}") from None


def _open(path: str):
    return _hf_fs().open(path, "rb") if is_hf(path) else open(path, "rb")


def _hash_pass(path: str, tap):
    """Read the stored file front to back through ``tap`` (digest and size). A remote file is
    kept in memory and returned (a pyarrow buffer), so it is downloaded once; a local one is not
    (None: read it from disk)."""
    import pyarrow as pa

    with _open(path) as fh:
        tapped, blocks = tap(fh), []
        while block := tapped.read(_HASH_BLOCK):
            if is_hf(path):
                blocks.append(block)
    return pa.py_buffer(b"".join(blocks)) if is_hf(path) else None


def _is_text(kind) -> bool:
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_null(kind)


def _is_time(kind) -> bool:
    import pyarrow as pa

    return (pa.types.is_integer(kind) or pa.types.is_floating(kind) or pa.types.is_timestamp(kind)
            or pa.types.is_null(kind) or _is_text(kind))


def schema_problem(schema) -> str | None:
    """Why a file's Arrow schema cannot hold dump records (None when it can)."""
    import pyarrow as pa

    names = set(schema.names)
    for needed in ("subreddit", "created_utc"):
        if needed not in names:
            return f"no {needed!r} column"
    if "id" not in names and "name" not in names:
        return "no 'id' column"
    for name in names & set(COLUMNS):
        kind = schema.field(name).type
        if name in _TEXT and not _is_text(kind):
            return f"column {name!r} should hold text, it holds {kind}"
        if name in ("created_utc", "created") and not _is_time(kind):
            return f"column {name!r} should hold times, it holds {kind}"
        if name == "_meta" and not (pa.types.is_struct(kind) or pa.types.is_map(kind) or _is_text(kind)):
            return f"column '_meta' should hold a struct, it holds {kind}"
    return None


def _wanted(subreddits) -> tuple | None:
    """The wanted names lowercased, or None (no filter: parse every row) when not given or when
    a name is not plain ASCII (then only ``normalize`` compares them exactly)."""
    if subreddits is None:
        return None
    names = tuple(sorted({s.lower() for s in subreddits}))
    if not all(n.isascii() and n.isprintable() for n in names):
        return None
    return names


def _may_hold(stats, wanted: tuple) -> bool:
    """False only when a row group's ``subreddit`` statistics rule out every wanted name in every
    spelling Python's ``lower()`` maps to it: ASCII letters in either case, and the Kelvin sign
    for ``k`` (the one non-ASCII character whose lowercase is ASCII), which sorts after both."""
    if stats is None or not stats.has_min_max:
        return True
    low, high = stats.min, stats.max
    if not (isinstance(low, str) and isinstance(high, str)):
        return True
    return any(name.upper() <= high and low <= name.replace("k", "\u212a") for name in wanted)


def _subreddit_mask(column, wanted: tuple):
    """True for the rows to convert: a wanted subreddit (any case), a null one, or one that is not
    ASCII (the exact path decides). Computed on the dictionary when the column has one."""
    import pyarrow as pa
    import pyarrow.compute as pc

    column = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    if pa.types.is_null(column.type):
        return pa.array([True] * len(column))
    values = column.dictionary if pa.types.is_dictionary(column.type) else column
    keep = pc.or_(pc.is_in(pc.utf8_lower(values), value_set=pa.array(wanted, pa.string())),
                  pc.invert(pc.string_is_ascii(values)))
    if pa.types.is_dictionary(column.type):
        keep = pc.take(keep, column.indices)
    return pc.fill_null(keep, True)


def _seconds(column):
    """``created_utc`` as numbers of seconds (a timestamp column cast), or None for text."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = column.type
    if pa.types.is_timestamp(kind):
        return pc.cast(pc.cast(column, pa.timestamp("s", kind.tz), safe=False), pa.int64())
    if pa.types.is_integer(kind) or pa.types.is_floating(kind):
        return column
    return None


def _range_mask(table, until):
    """True for the rows ``until`` may keep: False only for submissions created after it (see
    the module's notes); None: keep all."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if until is None or "created_utc" not in table.column_names:
        return None
    seconds = _seconds(table.column("created_utc"))
    if seconds is None:
        return None

    def present(name):
        return pc.is_valid(table.column(name)) if name in table.column_names else pa.array([False] * len(table))

    comment = pc.or_(present("body"), present("parent_id"))
    submission = pc.and_(pc.invert(comment), pc.or_(present("title"), present("selftext")))
    late = pc.and_(pc.greater_equal(seconds, until + 1), pc.less(seconds, CREATED_RANGE[1]))  # int(t) > until
    return pc.invert(pc.fill_null(pc.and_(submission, late), False))


def _as_record(row: dict) -> dict:
    """One converted row as the JSON path would give it: nulls are missing keys, a map is a
    dict, ``_meta`` as JSON text is parsed."""
    record = {k: v for k, v in row.items() if v is not None}
    meta = record.get("_meta")
    if isinstance(meta, list):  # a map column: [(key, value), ...]
        record["_meta"] = dict(meta)
    elif isinstance(meta, str):
        try:
            record["_meta"] = json.loads(meta)
        except ValueError:
            pass  # not an object: ignored as a JSON dump's non-object _meta is
    return record


def _to_python(table):
    """The table's rows as dicts, ``created_utc`` timestamps as epoch seconds."""
    import pyarrow as pa

    for name in ("created_utc", "created"):
        if name in table.column_names and pa.types.is_timestamp(table.schema.field(name).type):
            index = table.column_names.index(name)
            table = table.set_column(index, name, _seconds(table.column(name)))
    return table.to_pylist()


def reads_parquet_too(read_dump):
    """``read_dump`` (:func:`lsdscc.corpus.sources.read_items`) reading a Parquet file
    (:func:`is_parquet`) with :func:`read_items` instead, from the same arguments."""
    signature = inspect.signature(read_dump)

    @functools.wraps(read_dump)
    def read(path, *args, **kwargs):
        if not is_parquet(path):
            return read_dump(path, *args, **kwargs)
        given = signature.bind(path, *args, **kwargs)
        given.apply_defaults()
        options = given.arguments
        return read_items(path, options["subreddits"], tap=options["tap"], part=options["part"],
                          parts=options["parts"])

    return read


def _corrupt(path: str, rows: int, exc: Exception) -> tuple:
    detail = (f"{path}: not a readable Parquet file ({type(exc).__name__}: {str(exc)[:200]}), after {rows:,} rows; "
              "the rest of the file is lost")
    return ("rejected", rows, "corrupt-file", detail, "", None)


def _open_parquet(path: str, held=None):
    """``(ParquetFile, None)`` or ``(None, the rejection item)`` for a file that cannot be used;
    the ``subreddit`` column is read dictionary-encoded. ``held``: the file's bytes, when read."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def source():
        return pa.BufferReader(held) if held is not None else _open(path) if is_hf(path) else path

    try:
        problem = schema_problem(pq.read_schema(source()))
        if problem is not None:
            return None, ("rejected", 0, "bad-parquet-schema", f"{path}: {problem}", "", None)
        return pq.ParquetFile(source(), read_dictionary=["subreddit"]), None
    except (pa.ArrowException, OSError, ValueError) as exc:
        return None, _corrupt(path, 0, exc)


def read_items(path: str, subreddits=None, until: int | None = None, tap=None,
               part: int = 0, parts: int = 1) -> Iterator[tuple]:
    """The items of one Parquet file as :func:`lsdscc.corpus.sources.read_items` gives them for
    a dump file (``line``: the row number in the file, from 1; ``offset``: None), plus
    ``("skipped", n, "out-of-range")`` for submissions after ``until`` (see the module's
    notes). ``part`` of ``parts``: row group ``g`` goes to part ``g % parts``; row numbers are
    the whole file's. ``tap``: see the module's notes (give it to one part only)."""
    held = None
    if tap is not None:
        try:
            held = _hash_pass(path, tap)
        except OSError as exc:
            yield _corrupt(path, 0, exc)
            return
    parquet, refused = _open_parquet(path, held)
    if refused is not None:
        if part == 0:
            yield refused
        return
    columns = [c for c in COLUMNS if c in parquet.schema_arrow.names]
    wanted, first = _wanted(subreddits), 0
    for group in range(parquet.metadata.num_row_groups):
        rows = parquet.metadata.row_group(group).num_rows
        if group % parts == part:
            try:
                yield from _group_items(parquet, group, columns, wanted, until, first)
            except Exception as exc:  # noqa: BLE001 - any decoder failure of a hostile file ends it as a dead letter
                yield _corrupt(path, first, exc)
                return
        first += rows


def _group_items(parquet, group: int, columns: list, wanted, until, first: int) -> Iterator[tuple]:
    """The items of one row group whose first row is row ``first`` (from 0) of the file."""
    import pyarrow as pa
    import pyarrow.compute as pc

    meta = parquet.metadata.row_group(group)
    if wanted is not None:
        leaves = [meta.column(i) for i in range(meta.num_columns)]
        stats = next((c.statistics for c in leaves if c.path_in_schema == "subreddit"), None)
        if not _may_hold(stats, wanted):
            yield ("skipped", meta.num_rows)
            return
        keep = _subreddit_mask(parquet.read_row_group(group, columns=["subreddit"]).column(0), wanted)
        kept = pc.sum(keep).as_py() or 0
        if kept < meta.num_rows:
            yield ("skipped", meta.num_rows - kept)
        if not kept:
            return
    else:
        keep = None
    start = 0  # the group's columns are decoded a batch at a time: a row group of a month can be large
    for batch in parquet.iter_batches(batch_size=BATCH_ROWS, row_groups=[group], columns=columns):
        yield from _batch_items(pa.Table.from_batches([batch]), keep, until, first + start, start)
        start += batch.num_rows


def _batch_items(table, keep, until, first: int, start: int) -> Iterator[tuple]:
    """The items of one batch of a row group: its first row is row ``first`` (from 0) of the
    file and row ``start`` of the group (``keep``: the group's subreddit mask, or None)."""
    import pyarrow.compute as pc

    rows = None
    if keep is not None:
        keep = keep.slice(start, len(table))
        rows = pc.indices_nonzero(keep)
        table = table.filter(keep)
    in_range = _range_mask(table, until)
    if in_range is not None:
        late = len(table) - (pc.sum(in_range).as_py() or 0)
        if late:
            yield ("skipped", late, "out-of-range")
            rows = pc.filter(rows, in_range) if rows is not None else pc.indices_nonzero(in_range)
            table = table.filter(in_range)
    numbers = rows.to_pylist() if rows is not None else range(len(table))
    for number, row in zip(numbers, _to_python(table)):
        yield ("ok", first + number + 1, _as_record(row), None)
