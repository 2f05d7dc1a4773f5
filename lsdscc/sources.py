"""Input files for the LSDSCC corpus: Reddit dumps as JSON lines (plain, .gz, .zst) or JSON arrays.

- :func:`resolve_inputs` turns ``--input`` values (files, folders, globs, ``gs://`` paths)
  into a sorted file list, raising :class:`~multiref.errors.UserError` for a missing path
  or an empty glob.
- :func:`read_items` yields each record of one file as ``("ok", line, dict)`` or, for a
  line that cannot be used, ``("rejected", line, reason, detail, raw)``. Compression is
  recognised by its magic bytes (zstd ``28 b5 2f fd``, gzip ``1f 8b``), so names do not
  matter. Reddit's zstd dumps are decoded with a 2 GiB window (``max_window_size=2**31``),
  streaming, frame after frame; a file that ends inside a compressed frame yields one
  ``truncated-file`` rejection naming how many lines and bytes were read.
- A file whose first non-blank byte is ``[`` is a JSON array (the BigQuery / PolyAI export).
- :func:`default_inputs` is the bundled sample (``lsdscc/sample/``), the default input.
"""

from __future__ import annotations

import glob
import json
import os
import zlib
from typing import Iterator

from multiref.errors import UserError

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20
_DUMP_SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".json", ".json.gz", ".json.zst", ".zst", ".gz", ".ndjson")
SAMPLE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample")


class TruncatedFile(Exception):
    """The compressed stream ended early."""


def default_inputs() -> list[str]:
    """The bundled r/movies-style sample (submissions and comments), the default input."""
    return sorted(os.path.join(SAMPLE_DIR, name) for name in os.listdir(SAMPLE_DIR) if name.endswith(".zst"))


def _is_remote(path: str) -> bool:
    return "://" in path


def _dump_files_in(folder: str) -> list[str]:
    return sorted(
        os.path.join(folder, n)
        for n in os.listdir(folder)
        if n.endswith(_DUMP_SUFFIXES) and not n.startswith(".") and os.path.isfile(os.path.join(folder, n))
    )


def resolve_inputs(specs) -> list[str]:
    """Files named by ``specs`` (paths, folders, globs), sorted and without repeats.

    A folder stands for its dump files (``*.jsonl``, ``*.zst``, ``*.gz``, ``*.json``: e.g. the
    crawler's ``submissions.jsonl`` + ``comments.jsonl``). ``gs://`` and other remote paths
    are matched with Beam's FileSystems.
    """
    files: list[str] = []
    for spec in specs:
        if _is_remote(spec):
            from apache_beam.io.filesystems import FileSystems

            matches = [m.path for r in FileSystems.match([spec]) for m in r.metadata_list]
            if not matches:
                raise UserError(f"no input files match {spec}")
            files += matches
        elif any(ch in spec for ch in "*?["):
            matches = sorted(p for p in glob.glob(spec) if os.path.isfile(p))
            if not matches:
                raise UserError(f"no input files match the glob {spec}")
            files += matches
        elif os.path.isdir(spec):
            found = _dump_files_in(spec)
            if not found:
                raise UserError(f"input folder has no dump files (*.jsonl, *.zst, *.gz, *.json): {spec}")
            files += found
        elif os.path.isfile(spec):
            files.append(spec)
        else:
            raise UserError(f"input not found: {spec}")
    return sorted(set(files))


def _open(path: str):
    if _is_remote(path):
        from apache_beam.io.filesystems import CompressionTypes, FileSystems

        return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)
    return open(path, "rb")


def _chunks(fh) -> Iterator[bytes]:
    """Decompressed chunks of ``fh``; raises TruncatedFile(bytes_out) when a frame is cut."""
    head = fh.read(4)
    if head[:4] == ZSTD_MAGIC:
        import zstandard

        dctx = zstandard.ZstdDecompressor(max_window_size=2**31)
        new = dctx.decompressobj
    elif head[:2] == GZIP_MAGIC:
        def new():
            return zlib.decompressobj(16 + zlib.MAX_WBITS)
    else:
        if head:
            yield head
        while True:
            data = fh.read(_CHUNK)
            if not data:
                return
            yield data
    dobj, fresh, produced, data = new(), True, 0, head
    while True:
        while data:
            fresh = False
            out = dobj.decompress(data)
            produced += len(out)
            if out:
                yield out
            if dobj.eof:  # end of one frame / member: the next may follow
                data = dobj.unused_data
                dobj, fresh = new(), True
            else:
                data = b""
        data = fh.read(_CHUNK)
        if not data:
            break
    if not fresh:
        raise TruncatedFile(produced)


def _lines(chunks: Iterator[bytes]) -> Iterator[bytes]:
    rest = b""
    for chunk in chunks:
        parts = (rest + chunk).split(b"\n")
        rest = parts.pop()
        yield from parts
    if rest:
        yield rest


def _parse(raw: bytes):
    """One line -> ("ok", dict) or ("rejected", reason, detail)."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return ("rejected", "not-utf8", f"invalid UTF-8 at byte {exc.start}")
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        return ("rejected", "malformed-json", f"{exc.msg} at column {exc.colno}")
    if not isinstance(record, dict):
        return ("rejected", "not-object", f"expected a JSON object, got {type(record).__name__}")
    return ("ok", record)


def read_items(path: str) -> Iterator[tuple]:
    """Every record of one dump file, in file order (see the module docstring)."""
    with _open(path) as fh:
        chunks = _chunks(fh)
        line_no = 0
        consumed = 0
        try:
            first = next(chunks, b"")
            stripped = first.lstrip()
            if stripped.startswith(b"["):
                yield from _read_array(path, first, chunks)
                return
            import itertools

            for raw in _lines(itertools.chain([first], chunks)):
                line_no += 1
                consumed += len(raw) + 1
                if not raw.strip():
                    continue
                parsed = _parse(raw)
                if parsed[0] == "ok":
                    yield ("ok", line_no, parsed[1])
                else:
                    yield ("rejected", line_no, parsed[1], parsed[2], raw.decode("utf-8", "replace"))
        except TruncatedFile as exc:
            yield (
                "rejected",
                line_no,
                "truncated-file",
                f"{path}: compressed stream ends early, after {line_no:,} lines "
                f"({exc.args[0]:,} bytes decompressed); the rest of the file is lost",
                "",
            )


def _read_array(path: str, first: bytes, chunks) -> Iterator[tuple]:
    data = first + b"".join(chunks)
    try:
        items = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        yield ("rejected", 1, "not-utf8", f"JSON array file: invalid UTF-8 at byte {exc.start}", "")
        return
    except json.JSONDecodeError as exc:
        yield ("rejected", exc.lineno, "malformed-json", f"JSON array file: {exc.msg} at line {exc.lineno}", "")
        return
    if not isinstance(items, list):
        yield ("rejected", 1, "not-object", "expected a JSON array of records", "")
        return
    for number, record in enumerate(items, start=1):
        if isinstance(record, dict):
            yield ("ok", number, record)
        else:
            yield ("rejected", number, "not-object", f"array item {number} is a {type(record).__name__}", json.dumps(record)[:2000])
