"""Input files for the LSDSCC corpus: Reddit dumps as JSON lines (plain, .gz, .zst) or JSON arrays.

- :func:`resolve_inputs` turns local ``--input`` values (files, folders, globs, FIFOs) into
  a sorted file list, raising :class:`~multiref.util.errors.UserError` for a missing path or an
  empty glob; remote (``gs://``) paths and globs pass through unread and are expanded inside
  the job by :func:`match_remote`.
- :func:`read_items` yields each record of one file as ``("ok", line, dict)`` or, for a
  line that cannot be used, ``("rejected", line, reason, detail, raw)``; with
  ``subreddits=`` it also skips, before any JSON parsing, lines that certainly belong to
  another subreddit and reports them as ``("skipped", n)`` (see :func:`read_items`).
  Decompressed data is handled a block of whole lines at a time. Compression is
  recognised by its magic bytes (zstd ``28 b5 2f fd``, or a zstd skippable frame first as
  ``pzstd`` writes it; gzip ``1f 8b``), so names do not matter; xz, bzip2, 7z and zip files
  are named with the command that converts them (:func:`check_compression` before the job, an
  ``unsupported-compression`` dead letter for a FIFO), never read as text. Reddit's zstd dumps
  are decoded with a 2 GiB window (``max_window_size=2**31``), streaming, frame after frame,
  fed a little at a time so one decoder call yields at most 8 MiB (:data:`_ZSTD_SLICE`); a file
  that ends inside a compressed frame yields one ``truncated-file`` rejection naming how many
  lines and bytes were read, and a file the decoder refuses part way (a gzip CRC or deflate
  error, zstd garbage, an unreadable member) one ``corrupt-file`` rejection the same way: the
  lines before the fault are kept.
- Every line that cannot be used is a rejection with its reason, never an exception:
  a line over :data:`MAX_LINE_BYTES` (``too-long``, counted to its end unparsed, in linear
  time; a file with no line end within :data:`MAX_LINE_SKIP` bytes ends there), invalid JSON
  or UTF-8, a value that is not an object, nesting deeper than :data:`MAX_DEPTH`
  (``too-deep``), a number Python will not convert (``out-of-range``).
- A file whose first non-blank byte is ``[`` is a JSON array (the BigQuery / PolyAI export),
  streamed item by item (no prefilter; :func:`_read_array`).
- :func:`default_inputs` is the bundled sample (``lsdscc/corpus/sample/``), the default input.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import json
import operator
import os
import re
import zlib
from typing import Iterator

from lsdscc.corpus import parquet_source
from lsdscc.corpus.cleaning import NO_C_EXTENSION
from lsdscc.corpus.records import MAX_TEXT_CHARS, redact_record
from multiref.util.errors import UserError
from multiref.util.location import is_remote

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20
#: Compressed bytes given to the zstd decoder per call: zstd's densest block (RLE: 4 bytes for
#: 128 KiB) then bounds one call's output to 8 MiB, whatever the file holds.
_ZSTD_SLICE = 1 << 8
#: Compressed bytes given to the gzip decoder per call; its output is read 1 MiB at a time.
_GZIP_SLICE = 1 << 16
#: A line (or JSON array item) longer than this many bytes is a ``too-long`` dead letter,
#: never parsed. A record's text is at most ``MAX_TEXT_CHARS`` (40,400) characters, at most 12
#: bytes each as JSON escapes (484,800 bytes), which leaves 563,776 bytes for its other fields.
MAX_LINE_BYTES = 1 << 20
#: A line without a line end within this many bytes ends the file's reading (one ``too-long``
#: letter says so): ``--input /dev/zero`` ends. Shorter over-long lines are skipped, counted,
#: and the lines after them are read.
MAX_LINE_SKIP = 1 << 30
#: Compressed formats the reader does not decode, by magic bytes: ``(magic, name, how to
#: convert FILE to zstd)``. Such a file is named with the command, never read as text.
UNSUPPORTED = (
    (b"\xfd7zXZ\x00", "xz", "xz -dc {path} | zstd -o {stem}.zst"),
    (b"BZh", "bzip2", "bzip2 -dc {path} | zstd -o {stem}.zst"),
    (b"7z\xbc\xaf\x27\x1c", "7z", "7z x -so {path} | zstd -o {stem}.zst"),
    (b"PK\x03\x04", "zip", "unzip -p {path} | zstd -o {stem}.zst"),
    (b"PK\x05\x06", "zip", "unzip -p {path} | zstd -o {stem}.zst"),
)
_HEAD = 6
#: With ``parts > 1`` (:func:`read_items`), decompressed blocks are cut at line ends into
#: pieces of about this size, dealt out to the parts in turn.
PIECE = 1 << 22
_DUMP_SUFFIXES = (".jsonl", ".jsonl.gz", ".jsonl.zst", ".json", ".json.gz", ".json.zst", ".zst", ".gz", ".ndjson")
SAMPLE_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample")


#: Lines nested deeper than this are rejected (``too-deep``) whichever parser reads them;
#: Reddit records nest a few levels. It is below both parsers' own limits (orjson's 1024,
#: json's recursion limit), so the outcome depends neither on the parser nor on the stack.
MAX_DEPTH = 500


class TruncatedFile(Exception):
    """The compressed stream ended early; ``args[0]``: bytes decompressed before the end."""


class CorruptFile(Exception):
    """The decoder refused the data; ``args``: (bytes decompressed before, the decoder's reason)."""


class UnsupportedFile(Exception):
    """The file is compressed in a format the reader does not decode; ``args[0]``: its name."""


_STREAM_ENDS = (TruncatedFile, CorruptFile, UnsupportedFile)


def compression(head: bytes) -> str:
    """The compression of a stream starting with ``head`` (its first 6 bytes or fewer), by
    magic bytes: ``zstd`` (a frame, or a skippable frame as ``pzstd`` and seekable zstd
    write first), ``gzip``, a name of :data:`UNSUPPORTED`, or ``plain``."""
    if head[:4] == ZSTD_MAGIC or (len(head) >= 4 and head[0] & 0xF0 == 0x50 and head[1:4] == b"\x2a\x4d\x18"):
        return "zstd"
    if head[:2] == GZIP_MAGIC:
        return "gzip"
    for magic, name, _ in UNSUPPORTED:
        if head.startswith(magic) and (name != "bzip2" or head[3:4] in b"123456789" and len(head) > 3):
            return name
    return "plain"


def unsupported_message(path: str, name: str) -> str:
    """One line naming ``path``, its format and the command that converts it to zstd."""
    stem = os.path.basename(path).rsplit(".", 1)[0] or "dump"
    command = next(c for _, n, c in UNSUPPORTED if n == name).format(path=path, stem=stem)
    return (f"{path}: compressed with {name}, which the reader does not decode (it reads plain, gzip and zstd JSON "
            f"lines); convert it first: {command}")


def check_compression(path: str) -> None:
    """UserError (:func:`unsupported_message`) when the local regular file ``path`` is in a
    format of :data:`UNSUPPORTED`; FIFOs and remote files are not opened here (the reader
    turns them into one ``unsupported-compression`` dead letter)."""
    if _is_remote(path) or not os.path.isfile(path):
        return
    with open(path, "rb") as fh:
        kind = compression(fh.read(_HEAD))
    if kind in {n for _, n, _ in UNSUPPORTED}:
        raise UserError(unsupported_message(path, kind))


def default_inputs() -> list[str]:
    """The bundled r/movies-style sample (submissions and comments), the default input."""
    return sorted(os.path.join(SAMPLE_DIR, name) for name in os.listdir(SAMPLE_DIR) if name.endswith(".zst"))


def _is_remote(path: str) -> bool:
    return is_remote(path)


def _dump_files_in(folder: str) -> list[str]:
    return sorted(
        os.path.join(folder, n)
        for n in os.listdir(folder)
        if n.endswith(_DUMP_SUFFIXES) and not n.startswith(".") and os.path.isfile(os.path.join(folder, n))
    )


def resolve_inputs(specs) -> list[str]:
    """Files named by ``specs`` (paths, folders, globs), sorted and without repeats.

    A folder stands for its dump files (``*.jsonl``, ``*.zst``, ``*.gz``, ``*.json``: e.g. the
    crawler's ``submissions.jsonl`` + ``comments.jsonl``). A local path is resolved here
    (UserError if missing); ``gs://`` and other remote paths or globs are returned as given,
    unread: the job matches them (:func:`match_remote`), so building the graph needs no network.
    """
    files: list[str] = []
    for spec in specs:
        if _is_remote(spec):
            files.append(spec)
        elif any(ch in spec for ch in "*?["):
            matches = sorted(p for p in glob.glob(spec, recursive=True) if os.path.isfile(p))
            if not matches:
                raise UserError(f"no input files match the glob {spec}")
            files += matches
        elif os.path.isdir(spec):
            found = _dump_files_in(spec) + parquet_source.parquet_files_in(spec)
            if not found:
                raise UserError(f"input folder has no dump files (*.jsonl, *.zst, *.gz, *.json, or *.parquet "
                                f"as in data/comments/YYYY/MM/): {spec}")
            files += found
        elif _is_readable_file(spec):
            files.append(spec)
        else:
            raise UserError(f"input not found: {spec}")
    files = sorted(set(files))
    for path in files:
        check_compression(path)
    return files


def _is_readable_file(path: str) -> bool:
    """A regular file, or any other existing non-folder that can be opened for reading (a FIFO,
    ``<(zstdcat ...)``'s ``/dev/fd/N``). A FIFO is not opened here: it can be read only once."""
    try:
        return not os.path.isdir(path) and os.path.exists(path) and os.access(path, os.R_OK)
    except OSError:
        return False


def match_remote(pattern: str) -> list[str]:
    """The files a remote path or glob (``gs://B/reddit/R[CS]_2017-*.zst``) names, sorted, as
    matched by Beam's FileSystems when the job runs; UserError when nothing matches."""
    if parquet_source.is_hf(pattern):  # hf://datasets/...: the Hub's file system (parquet_source)
        return parquet_source.match_hf(pattern)
    from apache_beam.io.filesystems import FileSystems

    matches = sorted(m.path for r in FileSystems.match([pattern]) for m in r.metadata_list)
    if not matches:
        raise UserError(f"no input files match {pattern}")
    return matches


def _open(path: str):
    if _is_remote(path):
        from apache_beam.io.filesystems import CompressionTypes, FileSystems

        return FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)
    return open(path, "rb")


def _zstd():
    import zstandard

    new = zstandard.ZstdDecompressor(max_window_size=2**31).decompressobj

    def step(dobj, data):
        return (dobj.decompress(data),)  # one call, one output (a tuple: no generator per 256 bytes)

    return new, step, _ZSTD_SLICE, (zstandard.ZstdError,)


def _gzip():
    def step(dobj, data):
        out = dobj.decompress(data, _CHUNK)
        yield out
        while (dobj.unconsumed_tail or len(out) == _CHUNK) and not dobj.eof:  # a full output: more may wait
            out = dobj.decompress(dobj.unconsumed_tail, _CHUNK)
            yield out

    return (lambda: zlib.decompressobj(16 + zlib.MAX_WBITS)), step, _GZIP_SLICE, (zlib.error,)


def _chunks(fh) -> Iterator[bytes]:
    """Decompressed chunks of ``fh``: frame after frame (zstd), member after member (gzip),
    each of at most about 9 MiB (:data:`_ZSTD_SLICE`, :data:`_GZIP_SLICE`), whatever the
    compression ratio.

    Raises TruncatedFile(bytes out) when the data ends inside a frame, CorruptFile(bytes
    out, reason) when the decoder refuses the data, UnsupportedFile(name) for a format of
    :data:`UNSUPPORTED`.
    """
    head = fh.read(_HEAD)
    kind = compression(head)
    if kind == "plain":
        if head:
            yield head
        while data := fh.read(_CHUNK):
            yield data
        return
    if kind not in ("zstd", "gzip"):
        raise UnsupportedFile(kind)
    new, step, size, errors = _zstd() if kind == "zstd" else _gzip()
    state = [new(), True, 0]  # decoder, at a frame start, bytes out
    data = head
    while data:
        yield from _decoded(data, state, new, step, size, errors)
        data = fh.read(_CHUNK)
    if not state[1]:
        raise TruncatedFile(state[2])


def _decoded(data: bytes, state: list, new, step, size: int, errors) -> Iterator[bytes]:
    """The output of one read of compressed ``data``, fed ``size`` bytes per call, joined
    into chunks of about :data:`_CHUNK` bytes; ``state`` (decoder, at a frame start, bytes
    out) carries over to the next read. What was decoded before a fault is yielded first."""
    view, pos, outs, held = memoryview(data), 0, [], 0
    try:
        while pos < len(view):
            dobj, state[1] = state[0], False
            piece = view[pos:pos + size]
            for out in step(dobj, piece):
                state[2] += len(out)
                if len(out) >= _CHUNK and not outs:
                    yield out
                elif out:
                    outs.append(out)
                    held += len(out)
                    if held >= _CHUNK:
                        yield b"".join(outs)
                        outs, held = [], 0
            pos += len(piece)
            if dobj.eof:  # end of one frame / member: the next may follow in the unused bytes
                pos -= len(dobj.unused_data)
                state[0], state[1] = new(), True
    except errors as exc:
        if outs:
            yield b"".join(outs)
        raise CorruptFile(state[2], f"{type(exc).__name__}: {exc}") from None
    if outs:
        yield b"".join(outs)


class _LongLine:
    """A line of ``size`` bytes over :data:`MAX_LINE_BYTES`, skipped unread; ``ended``: False
    when no line end came within :data:`MAX_LINE_SKIP` bytes (the file's reading stops)."""

    __slots__ = ("size", "ended")

    def __init__(self, size: int, ended: bool):
        self.size, self.ended = size, ended


def _blocks(chunks: Iterator[bytes], limit: int | None = None) -> Iterator:
    """Whole lines of ``chunks``, one block per decompressed chunk: each block is complete
    lines joined by ``\\n`` (a final unterminated line joins the last block). Blocks lag one
    chunk behind, so on a TruncatedFile from ``chunks`` the pending block is yielded first;
    the cut line is not yielded. The same on a CorruptFile.

    A line that grows past ``limit`` (:data:`MAX_LINE_BYTES`) across chunks is not kept: its
    bytes are counted to its end and it comes as one :class:`_LongLine` (linear time, memory
    bounded by ``limit`` and a chunk); past :data:`MAX_LINE_SKIP` bytes without an end, the
    last item is an unended :class:`_LongLine`. (A long line inside one chunk stays in its
    block: :func:`_item` refuses it by its length.)"""
    limit = MAX_LINE_BYTES if limit is None else limit
    state = [None, [], 0, -1]  # pending block, rest's parts, rest's length, bytes of a skipped line (-1: none)
    try:
        for chunk in chunks:
            yield from _chunk_lines(chunk, state, limit)
            if state[3] > MAX_LINE_SKIP:
                yield _LongLine(state[3], False)
                return
    except _STREAM_ENDS:
        if state[0] is not None:
            yield state[0]
        raise
    pending, rest, _, skipped = state
    if skipped >= 0:
        yield _LongLine(skipped, True)
        return
    tail = b"".join(rest)
    if pending is None:
        pending = tail
    elif tail:
        pending += b"\n" + tail
    if pending:
        yield pending


def _chunk_lines(chunk: bytes, state: list, limit: int) -> Iterator:
    """:func:`_blocks` for one chunk: what it completes, ``state`` brought up to date."""
    while chunk:
        if state[3] >= 0:  # inside an over-long line: count to its end
            cut = chunk.find(b"\n")
            if cut < 0:
                state[3] += len(chunk)
                return
            yield _LongLine(state[3] + cut, True)
            state[3], chunk = -1, chunk[cut + 1:]
            continue
        cut = chunk.rfind(b"\n")
        if cut < 0:
            if state[2] + len(chunk) > limit:  # the rest's line outgrows the limit: drop what it holds
                if state[0] is not None:
                    yield state[0]
                state[:] = None, [], 0, state[2]
                continue
            state[1].append(chunk)
            state[2] += len(chunk)
            return
        if state[0] is not None:
            yield state[0]
        head = memoryview(chunk)[:cut]
        state[0] = b"".join([*state[1], head]) if state[1] else chunk[:cut]  # one copy of the block's bytes
        state[1], state[2] = [chunk[cut + 1:]], len(chunk) - cut - 1
        return


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

    ``exact``: ``(index in block, raw line, byte offset in block)`` for every line that must
    be parsed; ``skipped``:
    how many lines certainly belong to another subreddit; ``lines``: lines in the block. A line
    is skipped only when it starts with ``{``, ends with ``}``, is valid UTF-8, holds the bytes
    ``"subreddit"`` exactly once, followed by ``:`` and a plain ASCII string (no backslash)
    whose lowercase form is not wanted, and holds no ``\\u006``/``\\u007`` escape (the only
    way an escape could spell the lowercase letters of the key). The record's own
    ``subreddit`` key (after the Reddit API unwrap) is then that one occurrence, so a skipped
    line is one ``normalize`` would drop as ``other-subreddit``. Everything else, including
    lines without the key, keys nested twice (crossposts), escaped or non-ASCII values and
    body texts quoting the key, takes the exact path: a false positive is only slower.

    The C scanner (``lsdscc/corpus/_sources_native.c``) decides a block read in place, never
    split into lines, checking the UTF-8 of the lines it would skip only (a line that is parsed
    is checked by the parser). Without it, a block whose every line has that shape (a month of
    comments) is decided a block at a time (:func:`_scan_regular`), any other a line at a time
    (:func:`_scan_lines`), as is a block with invalid UTF-8. The three give the same lines
    (tests/test_lsdscc_sources_prefilter.py).
    """
    if _NATIVE_SCAN is not None:
        exact, count = _NATIVE_SCAN(block, _KEY, tuple(wanted), MAX_LINE_BYTES)
        return exact, count - len(exact), count
    lines = block.split(b"\n")
    exact = _scan_regular(block, lines, wanted)
    if exact is None:
        exact = _scan_lines(block, lines, wanted)
    return exact, len(lines) - len(exact), len(lines)


def _native_module():
    """The C scanner (``_sources_native``, built by ``pip install``), or None when it is not
    built or ``MULTIREF_NO_C_EXTENSION`` is set (:data:`lsdscc.corpus.cleaning.NO_C_EXTENSION`):
    :func:`_scan_regular` gives the same lines as its ``scan``, :func:`_python_shape_flags`
    the same flags as its ``shape``, more slowly."""
    if os.environ.get(NO_C_EXTENSION, "") not in ("", "0"):
        return None
    try:
        from lsdscc.corpus import _sources_native
    except ImportError:  # pragma: no cover - a build without a C compiler
        return None
    return _sources_native


_NATIVE = _native_module()
_NATIVE_SCAN = None if _NATIVE is None else _NATIVE.scan


_KEY_TAIL = b'subreddit"'  # once in each "subreddit", twice in two overlapping ones; never overlaps itself
_VALUE_NAME = operator.itemgetter(1)


def _scan_regular(block: bytes, lines: list, wanted: frozenset) -> list | None:
    """:func:`_scan_block`'s ``exact`` for a block of regular lines, None when a line is not
    (then :func:`_scan_lines` decides). Regular: every line is at most :data:`MAX_LINE_BYTES`,
    starts with ``{``, ends with ``}`` (or ``}\\r``), has ``"subreddit"`` followed by a plain
    value (:data:`_VALUE`) at its last occurrence, and the block holds as many ``subreddit"``
    as lines, no escape of :data:`_LETTER_ESCAPE` and only valid UTF-8. Each line then holds
    the key exactly once (at least once, and one ``subreddit"`` each), so the line rule reduces
    to the value's test. The checks run in C over the whole list (``map``, ``bytes.count``):
    no Python step per line; only the lines whose value is wanted are returned."""
    repeat = itertools.repeat
    keys = list(map(bytes.rfind, lines, repeat(_KEY)))
    if -1 in keys or block.count(_KEY_TAIL) != len(lines):
        return None
    values = list(map(_VALUE.match, lines, map(operator.add, keys, repeat(len(_KEY)))))
    if None in values or not (all(map(bytes.startswith, lines, repeat(b"{")))
                              and all(map(bytes.endswith, lines, repeat(_OBJECT_ENDS)))):
        return None
    if len(block) > MAX_LINE_BYTES and _may_hold_long_line(block):
        return None
    if _LETTER_ESCAPE.search(block) or not (block.isascii() or _is_utf8(block)):
        return None
    names = list(map(bytes.lower, map(_VALUE_NAME, values)))
    if wanted.isdisjoint(names):
        return []
    before = list(itertools.accumulate(map(len, lines), initial=0))  # bytes of the lines before, without line ends
    hits = itertools.compress(range(len(lines)), map(wanted.__contains__, names))
    return [(i, lines[i], before[i] + i) for i in hits]


def _may_hold_long_line(block: bytes) -> bool:
    """False when no line of ``block`` is over :data:`MAX_LINE_BYTES`: such a line would hold a
    whole aligned window of half that size, and every window holds a line end (a few short finds)."""
    half = MAX_LINE_BYTES // 2
    return any(block.find(b"\n", at, at + half) < 0 for at in range(0, len(block) - half + 1, half))


def _scan_lines(block: bytes, lines: list, wanted: frozenset) -> list:
    """:func:`_scan_block`'s ``exact``, the rule applied a line at a time."""
    escape = check_utf8 = None  # block-wide checks, made at the first line that could be skipped
    exact: list = []
    match = _VALUE.match
    end = 0
    for index, line in enumerate(lines):
        start, end = end, end + len(line) + 1
        at = line.find(_KEY)
        if (  # the value first: a wanted line (the usual line of a month's comments) stops there
            at >= 0
            and (value := match(line, at + len(_KEY))) is not None
            and value[1].lower() not in wanted
            and line.rfind(_KEY) == at
            and line.startswith(b"{")
            and line.endswith(_OBJECT_ENDS)
            and len(line) <= MAX_LINE_BYTES
        ):
            if check_utf8 is None:
                escape = _LETTER_ESCAPE.search if _LETTER_ESCAPE.search(block) else False
                check_utf8 = not block.isascii() and not _is_utf8(block)
            if not (escape and escape(line)) and not (check_utf8 and not _is_utf8(line)):
                continue
        exact.append((index, line, start))
    return exact


def _orjson_loads():
    try:
        import orjson
    except ImportError:  # pragma: no cover - a dependency; the standard parser gives the same
        return None
    return orjson.loads


_FAST_LOADS = _orjson_loads()
#: A line's shape for the checks of :func:`_parse`, in one pass: ``d`` for an ASCII digit, ``b``
#: for an opening bracket (``[`` or ``{``), ``.`` for any other byte.
_SHAPE = bytes(ord("d") if 48 <= b <= 57 else ord("b") if b in b"[{" else ord(".") for b in range(256))
_LONG_NUMBER = b"d" * 19
_MANY_BRACKETS, _LONG_DIGITS = 1, 2  # the flags of _shape_flags


def _python_shape_flags(raw: bytes, max_depth: int, digits: int) -> int:
    """:data:`_MANY_BRACKETS` when ``raw`` holds more than ``max_depth`` opening brackets, plus
    :data:`_LONG_DIGITS` when it holds a run of ``digits`` ASCII digits (read on its
    :data:`_SHAPE`); the C scanner's ``shape`` gives the same in one pass, without the copy."""
    shape = raw.translate(_SHAPE)
    return (_MANY_BRACKETS if shape.count(b"b") > max_depth else 0) | (_LONG_DIGITS if b"d" * digits in shape else 0)


_shape_flags = _python_shape_flags if _NATIVE is None else _NATIVE.shape


_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKET = re.compile(rb"[\[\]{}]")


def _too_deep(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """True when the JSON text ``raw`` nests arrays and objects deeper than ``limit`` (brackets
    inside strings do not count). Linear; a line with few brackets returns at once."""
    if raw.count(b"[") + raw.count(b"{") <= limit:
        return False
    depth = 0
    for bracket in _BRACKET.findall(_STRING.sub(b"", raw)):
        depth += 1 if bracket in b"[{" else -1
        if depth > limit:
            return True
    return False


def _parse(raw: bytes):
    """One line -> ("ok", dict) or ("rejected", reason, detail); never raises.

    orjson parses first (about 3x faster): it accepts strictly less than ``json.loads`` (no
    NaN, no lone surrogates, valid UTF-8 only) and gives equal objects, except that it turns
    integers past 64 bits into floats, so a line with a run of 19+ digits goes to ``json``.
    Whatever orjson refuses is parsed by ``json``, whose error names the problem. A line
    nested deeper than :data:`MAX_DEPTH` is ``too-deep`` on both paths; an integer longer
    than Python converts (4,300 digits) is ``out-of-range``. Both checks start from the line's
    :func:`_shape_flags` (at most :data:`MAX_DEPTH` brackets cannot nest deeper): the C
    scanner's ``shape``, or :func:`_python_shape_flags` on the line's :data:`_SHAPE`.
    """
    flags = _shape_flags(raw, MAX_DEPTH, len(_LONG_NUMBER))
    if flags & _MANY_BRACKETS and _too_deep(raw):
        return ("rejected", "too-deep", f"JSON nested deeper than {MAX_DEPTH} levels")
    if _FAST_LOADS is not None and not flags & _LONG_DIGITS:
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
    except RecursionError:  # not reached below MAX_DEPTH; kept so a parse never raises
        return ("rejected", "too-deep", "JSON nested deeper than the parser allows")
    except ValueError as exc:  # an integer past sys.get_int_max_str_digits()
        return ("rejected", "out-of-range", str(exc).split(";")[0][:200])
    if not isinstance(record, dict):
        return ("rejected", "not-object", f"expected a JSON object, got {type(record).__name__}")
    return ("ok", record)


def _item(line_no: int, raw: bytes, offset: int) -> tuple | None:
    """The exact path: one line parsed -> an ``ok`` / ``rejected`` item (None for a blank line)."""
    if len(raw) > MAX_LINE_BYTES:
        return _long_item(line_no, _LongLine(len(raw), True), offset)
    if not raw.strip():
        return None
    parsed = _parse(raw)
    if parsed[0] == "ok":
        return ("ok", line_no, parsed[1], offset)
    return ("rejected", line_no, parsed[1], parsed[2], raw.decode("utf-8", "replace"), offset)


def _long_item(line_no: int, line: _LongLine, offset: int) -> tuple:
    """The ``too-long`` rejection of an over-long line, never parsed (no excerpt)."""
    if line.ended:
        detail = (f"a line of {line.size:,} bytes, over the {MAX_LINE_BYTES:,} a record can take "
                  f"(its text is at most {MAX_TEXT_CHARS:,} characters); not parsed")
    else:
        detail = (f"a line of more than {MAX_LINE_SKIP:,} bytes without a line end; "
                  "the rest of the file is not read")
    return ("rejected", line_no, "too-long", detail, "", offset)


@contextlib.contextmanager
def _tapped(opened, tap):
    """``opened`` (closed on exit), wrapped by ``tap`` when one is given."""
    with opened as fh:
        yield fh if tap is None else tap(fh)


@contextlib.contextmanager
def _metered(fh, path: str, label: str | None):
    """``fh``, or when ``label`` is given and progress is on (:mod:`multiref.util.progress`), ``fh``
    counting the bytes read (of the file as stored) for a progress line on stderr."""
    from multiref.util import progress

    if label is None or not progress.enabled():
        yield fh
        return
    total = os.path.getsize(path) if not _is_remote(path) and os.path.isfile(path) else None  # a FIFO: unknown
    meter = progress.ByteReader(fh, label, total=total, count_lines=False)
    try:
        yield meter
    finally:
        meter.bar.close()


@parquet_source.reads_parquet_too  # a .parquet path: parquet_source.read_items, the same items
def read_items(path: str, subreddits=None, progress_label: str | None = None, tap=None,
               part: int = 0, parts: int = 1) -> Iterator[tuple]:
    """Every record of one dump file, in file order, as items (line numbers count from 1):

    - ``("ok", line, record, offset)``: a JSON object (``dict``), to be checked by ``normalize``;
    - ``("rejected", line, reason, detail, raw, offset)``: ``reason`` is ``not-utf8``,
      ``malformed-json``, ``not-object``, ``too-deep`` or ``out-of-range`` (``raw``: the line
      as text), ``too-long`` (a line over :data:`MAX_LINE_BYTES`, never parsed, ``raw`` = ""),
      or, as the last item, ``truncated-file`` / ``corrupt-file`` / ``unsupported-compression``
      (``line`` = lines read, ``raw`` = "", ``offset`` = where the kept data ends);
    - ``("skipped", n)``, only with ``subreddits``: ``n >= 1`` lines of other subreddits,
      skipped unparsed since the previous such item; at most one per decompressed chunk.
      Count each as a record read and dropped ``other-subreddit``, as ``normalize`` would.

    ``subreddits``: names (an iterable of str, e.g. ``CorpusConfig.subreddits``), matched
    case-insensitively as :func:`lsdscc.corpus.records.normalize` matches them. A line is skipped
    only by the byte rules of :func:`_scan_block`: no line of a wanted subreddit is ever
    skipped, and every well-formed record counts the same as on the exact path (no
    ``subreddits``). Skipped lines are not parsed, so a line of another subreddit that looks
    like one object but is not valid JSON inside counts as ``other-subreddit``, not as
    ``malformed-json``; so does a record whose only ``"subreddit"`` key is nested in
    another object (``missing-field`` on the exact path).

    ``offset``: the byte offset of the line's start in the decompressed data (None for the
    records of a JSON array file). Bad data never raises; an unreadable path does (OSError).

    ``progress_label``: show reading progress on stderr under this label (bytes of the file,
    lines/s) when progress is on (``MULTIREF_PROGRESS``); when it is off nothing is wrapped.

    ``tap``: wraps the opened file (as stored), e.g. :meth:`lsdscc.corpus.provenance.FileTally.tap`.

    ``part`` of ``parts`` (default 0 of 1): the items of that share of the lines, for workers
    parsing one file together. Each part decompresses the whole file; the lines are cut into
    pieces of about :data:`PIECE` bytes, piece ``i`` going to part ``i % parts``. Line numbers
    and offsets are the whole file's; all parts together give the items of ``parts=1``
    (``skipped`` totals alike). A JSON array and the stream's end item go to part 0.
    """
    if isinstance(subreddits, (str, bytes)):
        raise TypeError(f"subreddits should be an iterable of names, not one string: {subreddits!r}")
    if not (isinstance(part, int) and isinstance(parts, int) and 0 <= part < parts):
        raise ValueError(f"part {part!r} of {parts!r}: expected 0 <= part < parts")
    wanted = _wanted(subreddits)
    with _tapped(_open(path), tap) as stored, _metered(stored, path, progress_label) as fh:
        meter = fh if fh is not stored else None
        chunks = _chunks(fh)
        where = [0, 0]  # lines read, byte offset of the next line
        try:
            first = next(chunks, b"")
            if first.lstrip().startswith(b"["):
                yield from _read_array(path, first, chunks) if part == 0 else ()
                return
            blocks = _blocks(itertools.chain([first], chunks))
            if parts > 1:
                blocks = _shares(_pieces(blocks, PIECE), part, parts, where)
            yield from _line_items(blocks, wanted, where, meter)
            if meter is not None:
                meter.lines_read(where[0])
        except _STREAM_ENDS as exc:
            if part == 0:
                yield _stream_end(path, exc, *where)


def _pieces(blocks, size: int) -> Iterator[bytes]:
    """``blocks`` (whole lines joined by ``\\n``) cut at line ends into pieces of at least
    ``size`` bytes (a block's last piece and a longer line may differ); the pieces joined by
    ``\\n`` are the blocks joined by ``\\n``."""
    for block in blocks:
        if type(block) is _LongLine:
            yield block
            continue
        start = 0
        while len(block) - start > size:
            cut = block.find(b"\n", start + size)
            if cut < 0:
                break
            yield block[start:cut]
            start = cut + 1
        yield block[start:] if start else block


def _shares(blocks, part: int, parts: int, where: list) -> Iterator[bytes]:
    """Every ``parts``-th block of ``blocks``, from the ``part``-th; for each one left out,
    ``where`` (lines read, byte offset of the next line) moves past its lines."""
    for index, block in enumerate(blocks):
        if index % parts == part:
            yield block
        elif type(block) is _LongLine:
            where[0] += 1
            where[1] += block.size + 1
        else:
            where[0] += block.count(b"\n") + 1
            where[1] += len(block) + 1


def _line_items(blocks, wanted, where: list, meter) -> Iterator[tuple]:
    """The items of the lines of ``blocks`` (see :func:`read_items`); ``where`` (lines read,
    byte offset of the next line) is brought up to date after each block."""
    for block in blocks:
        line_no, offset = where
        if meter is not None:
            meter.lines_read(line_no)
        if type(block) is _LongLine:
            yield _long_item(line_no + 1, block, offset)
            where[:] = line_no + 1, offset + block.size + 1
            continue
        if wanted is None:
            for line in block.split(b"\n"):
                line_no += 1
                item = _item(line_no, line, offset)
                offset += len(line) + 1
                if item is not None:
                    yield item
            where[:] = line_no, offset
            continue
        exact, skipped, count = _scan_block(block, wanted)
        for index, raw, start in exact:
            item = _item(line_no + index + 1, raw, offset + start)
            if item is not None:
                yield item
        where[:] = line_no + count, offset + len(block) + 1
        if skipped:
            yield ("skipped", skipped)


def _stream_end(path: str, exc: Exception, lines: int, offset: int) -> tuple:
    """The ``truncated-file`` / ``corrupt-file`` item that ends a file read up to ``lines``."""
    if isinstance(exc, UnsupportedFile):
        return ("rejected", lines, "unsupported-compression", unsupported_message(path, exc.args[0]), "", offset)
    if isinstance(exc, TruncatedFile):
        reason, what = "truncated-file", "compressed stream ends early"
    else:
        reason, what = "corrupt-file", f"the decoder refuses the data ({exc.args[1]})"
    detail = (f"{path}: {what}, after {lines:,} lines ({exc.args[0]:,} bytes decompressed); "
              "the rest of the file is lost")
    return ("rejected", lines, reason, detail, "", offset)


#: Bytes of a JSON array file kept ahead of the item being parsed (unless the file ends first).
_ARRAY_AHEAD = 1 << 16
_SPACE = re.compile(r"[ \t\r\n]*")
_DECODE = json.JSONDecoder().raw_decode


class _ArrayText:
    """A JSON array file's text, decoded from ``chunks`` as it is needed: ``text[pos:]`` is
    what is not parsed yet; ``read`` counts the bytes decoded (for an invalid-UTF-8 letter)."""

    def __init__(self, first: bytes, chunks):
        import codecs

        self.chunks = itertools.chain([first], chunks)
        self.decode = codecs.getincrementaldecoder("utf-8")().decode
        self.text, self.pos, self.read, self.eof = "", 0, 0, False
        self.bad: int | None = None  # the byte offset of invalid UTF-8: the text ends before it

    def more(self) -> None:
        """The next chunk appended (and the parsed text dropped); at invalid UTF-8, the text
        up to it, and the end (``eof``, ``bad`` set)."""
        chunk = next(self.chunks, None)
        try:
            new = self.decode(b"", final=True) if chunk is None else self.decode(chunk)
        except UnicodeDecodeError as exc:  # exc.object: the decoder's pending bytes, then chunk
            new = exc.object[:exc.start].decode("utf-8")
            self.bad = self.read - (len(exc.object) - len(chunk or b"")) + exc.start
            chunk = None
        self.text = self.text[self.pos:] + new
        self.pos = 0
        if chunk is None:
            self.eof = True
        else:
            self.read += len(chunk)

    def ahead(self, size: int = _ARRAY_AHEAD) -> None:
        while not self.eof and len(self.text) - self.pos < size:
            self.more()

    def skip_space(self) -> str:
        """The next character after white space ("" at the end of the file)."""
        while True:
            self.pos = _SPACE.match(self.text, self.pos).end()
            if self.pos < len(self.text) or self.eof:
                return self.text[self.pos:self.pos + 1]
            self.more()


def _read_array(path: str, first: bytes, chunks) -> Iterator[tuple]:
    """The records of a JSON array file, streamed: one item parsed at a time (``json``'s
    ``raw_decode``), so memory holds one item and :data:`_ARRAY_AHEAD` bytes, whatever the file's
    size. An item longer than :data:`MAX_LINE_BYTES`, nested deeper than :data:`MAX_DEPTH`,
    malformed, or invalid UTF-8 is one dead letter; after the first three the items' bounds are
    unknown, so it ends the file's reading (the items before are kept), as a cut stream does."""
    text = _ArrayText(first, chunks)
    number = 0
    text.skip_space()
    text.pos += 1  # the "[" read_items saw
    while True:
        text.ahead()
        mark = text.skip_space()
        if mark == "" and text.bad is not None:
            yield _utf8_letter(number + 1, text)
            return
        if mark == "]" or (mark == "" and number == 0):
            return
        if mark == "":
            yield _array_letter(number + 1, "malformed-json", "the file ends inside the array (no ']')")
            return
        if number:
            if mark != ",":
                yield _array_letter(number + 1, "malformed-json", "expected ',' or ']' after an item")
                return
            text.pos += 1
            text.skip_space()
        number += 1
        item = _array_item(text, number)
        if item[0] == "stop":
            yield item[1]
            return
        yield item


def _utf8_letter(number: int, text: _ArrayText) -> tuple:
    return _array_letter(number, "not-utf8", f"invalid UTF-8 at byte {text.bad}; the rest of the file is not read")


def _array_letter(number: int, reason: str, detail: str, raw="") -> tuple:
    return ("rejected", number, reason, f"JSON array file: item {number}: {detail}", raw, None)


def _array_item(text: _ArrayText, number: int) -> tuple:
    """Array item ``number``, parsed from ``text.pos`` -> an ``ok`` / ``rejected`` item, or
    ``("stop", letter)`` when the rest of the file cannot be read."""
    while True:
        start = text.pos
        try:
            record, end = _DECODE(text.text, start)
        except RecursionError:
            return ("stop", _array_letter(number, "too-deep", f"nested deeper than {MAX_DEPTH} levels; "
                                          "the rest of the file is not read"))
        except json.JSONDecodeError as exc:
            cut = exc.pos >= len(text.text.rstrip()) or exc.msg.startswith("Unterminated string")
            if cut and text.bad is not None:
                return ("stop", _utf8_letter(number, text))
            if not cut or text.eof:
                return ("stop", _array_letter(number, "malformed-json", f"{exc.msg}; the rest of the file is not read"))
            end = None
        except ValueError as exc:  # an integer past sys.get_int_max_str_digits()
            return ("stop", _array_letter(number, "out-of-range", f"{str(exc).split(';')[0][:200]}; "
                                          "the rest of the file is not read"))
        if end is not None and (end < len(text.text) or text.eof):
            break
        if len(text.text) - start > MAX_LINE_BYTES:  # (characters: at least as many bytes)
            return ("stop", _array_letter(number, "too-long", f"longer than {MAX_LINE_BYTES:,} bytes; "
                                          "the rest of the file is not read"))
        text.more()  # the item (or a number at the end of the text) may go on
    text.pos = end
    size = end - start
    if size > MAX_DEPTH and _too_deep(text.text[start:end].encode("utf-8", "surrogatepass")):
        return _array_letter(number, "too-deep", f"nested deeper than {MAX_DEPTH} levels")
    if size > MAX_LINE_BYTES:
        return _array_letter(number, "too-long", f"longer than {MAX_LINE_BYTES:,} bytes; not kept")
    if isinstance(record, dict):
        return ("ok", number, record, None)
    return _array_letter(number, "not-object", f"a {type(record).__name__}", redact_record(record))
