"""Input files for the LSDSCC corpus: Reddit dumps as JSON lines (plain, .gz, .zst) or JSON arrays.

- :func:`resolve_inputs` turns ``--input`` values (files, folders, globs, ``gs://`` paths)
  into a sorted file list, raising :class:`~multiref.errors.UserError` for a missing path
  or an empty glob.
- :func:`read_items` yields each record of one file as ``("ok", line, dict)`` or, for a
  line that cannot be used, ``("rejected", line, reason, detail, raw)``; with
  ``subreddits=`` it also skips, before any JSON parsing, lines that certainly belong to
  another subreddit and reports them as ``("skipped", n)`` (see :func:`read_items`).
  Decompressed data is handled a block of whole lines at a time. Compression is
  recognised by its magic bytes (zstd ``28 b5 2f fd``, gzip ``1f 8b``), so names do not
  matter. Reddit's zstd dumps are decoded with a 2 GiB window (``max_window_size=2**31``),
  streaming, frame after frame; a file that ends inside a compressed frame yields one
  ``truncated-file`` rejection naming how many lines and bytes were read.
- A file whose first non-blank byte is ``[`` is a JSON array (the BigQuery / PolyAI export),
  always parsed whole (no prefilter).
- :func:`default_inputs` is the bundled sample (``lsdscc/sample/``), the default input.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import json
import os
import re
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


def _blocks(chunks: Iterator[bytes]) -> Iterator[bytes]:
    """Whole lines of ``chunks``, one block per decompressed chunk: each block is complete
    lines joined by ``\\n`` (a final unterminated line joins the last block). Blocks lag one
    chunk behind, so on a TruncatedFile from ``chunks`` the pending block is yielded first;
    the cut line is not yielded."""
    pending, rest = None, b""
    try:
        for chunk in chunks:
            cut = chunk.rfind(b"\n")
            if cut < 0:
                rest += chunk
                continue
            if pending is not None:
                yield pending
            pending, rest = rest + chunk[:cut], chunk[cut + 1:]
    except TruncatedFile:
        if pending is not None:
            yield pending
        raise
    if pending is None:
        pending = rest
    elif rest:
        pending += b"\n" + rest
    if pending:
        yield pending


_KEY = b'"subreddit"'
_VALUE = re.compile(rb'[ \t\r]*:[ \t\r]*"([^"\\\x80-\xff]*)"')  # a plain ASCII string, no escapes
_LETTER_ESCAPE = re.compile(rb"\\u00[67]")  # \u0060-\u007f: how an escape could spell a lowercase letter
_OBJECT_ENDS = (b"}", b"}\r")


def _wanted(subreddits) -> frozenset | None:
    """The wanted subreddit names lowercased as ASCII bytes; None: no prefilter, parse every
    line (no ``subreddits``, or a name whose lowercase form is not plain printable ASCII)."""
    if subreddits is None:
        return None
    names = set()
    for name in subreddits:
        low = name.lower()
        if not (low.isascii() and low.isprintable()) or '"' in low or "\\" in low:
            return None
        names.add(low.encode("ascii"))
    return frozenset(names)


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _scan_block(block: bytes, wanted: frozenset) -> tuple[list, int, int]:
    """The subreddit prefilter on one block of lines -> (exact, skipped, lines).

    ``exact``: ``(index in block, raw line)`` for every line that must be parsed; ``skipped``:
    how many lines certainly belong to another subreddit; ``lines``: lines in the block. A line
    is skipped only when it starts with ``{``, ends with ``}``, is valid UTF-8, holds the bytes
    ``"subreddit"`` exactly once, followed by ``:`` and a plain ASCII string (no backslash)
    whose lowercase form is not wanted, and holds no ``\\u006``/``\\u007`` escape (the only
    way an escape could spell the lowercase letters of the key). The record's own
    ``subreddit`` key (after the Reddit API unwrap) is then that one occurrence, so a skipped
    line is one ``normalize`` would drop as ``other-subreddit``. Everything else, including
    lines without the key, keys nested twice (crossposts), escaped or non-ASCII values and
    body texts quoting the key, takes the exact path: a false positive is only slower.
    """
    lines = block.split(b"\n")
    escape = check_utf8 = None  # block-wide checks, made at the first line that could be skipped
    exact: list = []
    skipped = 0
    match = _VALUE.match
    for index, line in enumerate(lines):
        at = line.find(_KEY)
        if (
            at >= 0
            and line.rfind(_KEY) == at
            and line.startswith(b"{")
            and line.endswith(_OBJECT_ENDS)
            and (value := match(line, at + len(_KEY))) is not None
            and value[1].lower() not in wanted
        ):
            if check_utf8 is None:
                escape = _LETTER_ESCAPE.search if _LETTER_ESCAPE.search(block) else False
                check_utf8 = not block.isascii() and not _is_utf8(block)
            if not (escape and escape(line)) and not (check_utf8 and not _is_utf8(line)):
                skipped += 1
                continue
        exact.append((index, line))
    return exact, skipped, len(lines)


def _orjson_loads():
    try:
        import orjson
    except ImportError:  # pragma: no cover - a dependency; the standard parser gives the same
        return None
    return orjson.loads


_FAST_LOADS = _orjson_loads()
_DIGITS = bytes(ord("d") if chr(b).isdigit() and b < 128 else ord(".") for b in range(256))
_LONG_NUMBER = b"d" * 19


def _parse(raw: bytes):
    """One line -> ("ok", dict) or ("rejected", reason, detail).

    orjson parses first (about 3x faster): it accepts strictly less than ``json.loads`` (no
    NaN, no lone surrogates, valid UTF-8 only) and gives equal objects, except that it turns
    integers past 64 bits into floats, so a line with a run of 19+ digits goes to ``json``.
    Whatever orjson refuses is parsed by ``json``, whose error names the problem.
    """
    if _FAST_LOADS is not None and _LONG_NUMBER not in raw.translate(_DIGITS):
        try:
            record = _FAST_LOADS(raw)
        except ValueError:
            record = None
        if type(record) is dict:
            return ("ok", record)
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


def _item(line_no: int, raw: bytes) -> tuple | None:
    """The exact path: one line parsed -> an ``ok`` / ``rejected`` item (None for a blank line)."""
    if not raw.strip():
        return None
    parsed = _parse(raw)
    if parsed[0] == "ok":
        return ("ok", line_no, parsed[1])
    return ("rejected", line_no, parsed[1], parsed[2], raw.decode("utf-8", "replace"))


@contextlib.contextmanager
def _tapped(opened, tap):
    """``opened`` (closed on exit), wrapped by ``tap`` when one is given."""
    with opened as fh:
        yield fh if tap is None else tap(fh)


@contextlib.contextmanager
def _metered(fh, path: str, label: str | None):
    """``fh``, or when ``label`` is given and progress is on (:mod:`multiref.progress`), ``fh``
    counting the bytes read (of the file as stored) for a progress line on stderr."""
    from multiref import progress

    if label is None or not progress.enabled():
        yield fh
        return
    total = None if _is_remote(path) else os.path.getsize(path)
    meter = progress.ByteReader(fh, label, total=total, count_lines=False)
    try:
        yield meter
    finally:
        meter.bar.close()


def read_items(path: str, subreddits=None, progress_label: str | None = None, tap=None) -> Iterator[tuple]:
    """Every record of one dump file, in file order, as items (line numbers count from 1):

    - ``("ok", line, record)``: a JSON object (``dict``), to be checked by ``normalize``;
    - ``("rejected", line, reason, detail, raw)``: ``reason`` is ``not-utf8``,
      ``malformed-json`` or ``not-object`` (``raw``: the line as text), or ``truncated-file``
      (last item; ``line`` = lines read, ``raw`` = "");
    - ``("skipped", n)``, only with ``subreddits``: ``n >= 1`` lines of other subreddits,
      skipped unparsed since the previous such item; at most one per decompressed chunk.
      Count each as a record read and dropped ``other-subreddit``, as ``normalize`` would.

    ``subreddits``: names (an iterable of str, e.g. ``CorpusConfig.subreddits``), matched
    case-insensitively as :func:`lsdscc.records.normalize` matches them. A line is skipped
    only by the byte rules of :func:`_scan_block`: no line of a wanted subreddit is ever
    skipped, and every well-formed record counts the same as on the exact path (no
    ``subreddits``). Skipped lines are not parsed, so a line of another subreddit that looks
    like one object but is not valid JSON inside counts as ``other-subreddit``, not as
    ``malformed-json``; so does a record whose only ``"subreddit"`` key is nested in
    another object (``missing-field`` on the exact path).

    ``progress_label``: show reading progress on stderr under this label (bytes of the file,
    lines/s) when progress is on (``MULTIREF_PROGRESS``); when it is off nothing is wrapped.

    ``tap``: a function wrapping the opened file (as stored, before decompression), e.g.
    :meth:`lsdscc.provenance.FileTally.tap` to hash the bytes as they are read.
    """
    if isinstance(subreddits, (str, bytes)):
        raise TypeError(f"subreddits should be an iterable of names, not one string: {subreddits!r}")
    wanted = _wanted(subreddits)
    with _tapped(_open(path), tap) as stored, _metered(stored, path, progress_label) as fh:
        meter = fh if fh is not stored else None
        chunks = _chunks(fh)
        line_no = 0
        try:
            first = next(chunks, b"")
            if first.lstrip().startswith(b"["):
                yield from _read_array(path, first, chunks)
                return
            for block in _blocks(itertools.chain([first], chunks)):
                if meter is not None:
                    meter.lines_read(line_no)
                if wanted is None:
                    for line in block.split(b"\n"):
                        line_no += 1
                        item = _item(line_no, line)
                        if item is not None:
                            yield item
                    continue
                exact, skipped, count = _scan_block(block, wanted)
                for index, raw in exact:
                    item = _item(line_no + index + 1, raw)
                    if item is not None:
                        yield item
                line_no += count
                if skipped:
                    yield ("skipped", skipped)
            if meter is not None:
                meter.lines_read(line_no)
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
