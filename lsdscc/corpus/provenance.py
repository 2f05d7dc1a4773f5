"""Which dump files a dataset was built from: names, sizes, SHA-256 digests, records, times.

- :class:`FileTally` follows one input file while the reader reads it: :meth:`FileTally.tap`
  wraps the stored (still compressed) file so every byte read also feeds SHA-256, so the
  digest costs no second pass over the data. Its :meth:`~FileTally.summary` is what
  ``stats.json``, ``dataset_meta.json`` and the card list per file.
- :func:`read_hashes` reads Arctic Shift's ``hashes.txt`` (``<sha256>  <file name>`` a line,
  as ``sha256sum`` writes it); :func:`verify_files` checks every input against it before a
  build starts (one pass over each file, only when the user asks: ``--verify-hashes``).
"""

from __future__ import annotations

import hashlib
import os
import re

from multiref.util.errors import UserError

_HASH_LINE = re.compile(r"^([0-9a-fA-F]{64}) [ *]?(.+?)\s*$")
_BLOCK = 1 << 20


class _HashingReader:
    """A binary file object whose ``read`` feeds what it returns to ``tally``."""

    def __init__(self, fh, tally: "FileTally"):
        self._fh = fh
        self._tally = tally

    def read(self, size: int = -1) -> bytes:
        data = self._fh.read(size)
        if data:
            self._tally.hasher.update(data)
            self._tally.bytes += len(data)
        return data

    def __getattr__(self, name):
        return getattr(self._fh, name)


def source_name(path: str) -> str:
    """How the card and dead letters name an input: its file name, or for a Parquet shard in the
    open-index/arctic layout (every month's first shard is ``000.parquet``) the path from
    ``comments/`` or ``submissions/`` on (``comments/2024/01/000.parquet``)."""
    parts = path.replace("\\", "/").rstrip("/").split("/")
    if parts[-1].lower().endswith(".parquet"):
        for kind in ("comments", "submissions"):
            if kind in parts[:-1]:
                at = len(parts) - 1 - parts[::-1].index(kind)
                return "/".join(parts[at:])
    return os.path.basename(path.rstrip("/"))


class FileTally:
    """One input file's digest, size, record count and first/last ``created_utc``."""

    def __init__(self, path: str):
        self.path = path
        self.hasher = hashlib.sha256()
        self.bytes = 0
        self.records = 0
        self.first: int | None = None
        self.last: int | None = None

    def tap(self, fh):
        """``fh`` wrapped so that every byte read is hashed and counted."""
        return _HashingReader(fh, self)

    def saw(self, created: int | None) -> None:
        """One record read; ``created``: its ``created_utc`` when it was parsed."""
        if created is None:
            return
        self.first = created if self.first is None else min(self.first, created)
        self.last = created if self.last is None else max(self.last, created)

    def summary(self) -> dict:
        """``{"name", "bytes", "sha256", "records", "first_created_utc", "last_created_utc"}``."""
        return {"name": source_name(self.path), "bytes": self.bytes,
                "sha256": self.hasher.hexdigest(), "records": self.records,
                "first_created_utc": self.first, "last_created_utc": self.last}


def merge_summaries(summaries) -> dict:
    """One file's :meth:`FileTally.summary` from those of its parts (read by several
    workers): records summed, first/last times the extremes, name, size and digest from the
    part that hashed the file (the others give None). Merged summaries merge again the same."""
    summaries = list(summaries)
    if not summaries:
        raise ValueError("merge_summaries needs at least one summary")
    merged = dict(summaries[0])
    hashed = [s for s in summaries if s["sha256"] is not None]
    merged.update(bytes=hashed[0]["bytes"] if hashed else None, sha256=hashed[0]["sha256"] if hashed else None,
                  records=sum(s["records"] for s in summaries))
    for key, pick in (("first_created_utc", min), ("last_created_utc", max)):
        times = [s[key] for s in summaries if s[key] is not None]
        merged[key] = pick(times) if times else None
    return merged


def read_hashes(path: str) -> dict:
    """``{file name: sha256 hex}`` of a ``hashes.txt`` (``sha256sum`` format; blank lines and
    ``#`` comments skipped). UserError naming the file and line for anything else."""
    if not os.path.isfile(path):
        raise UserError(f"hashes file not found: {path}")
    out: dict = {}
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            text = raw.decode("utf-8", "replace").strip()
            if not text or text.startswith("#"):
                continue
            m = _HASH_LINE.match(text)
            if not m:
                raise UserError(f"{path}:{number}: expected '<sha256>  <file name>', got {text[:80]!r}")
            out[os.path.basename(m[2].lstrip("*"))] = m[1].lower()
    if not out:
        raise UserError(f"{path}: no '<sha256>  <file name>' lines")
    return out


def file_sha256(path: str) -> str:
    """The SHA-256 hex digest of a local or remote (Beam FileSystems) file."""
    digest = hashlib.sha256()
    if "://" in path:
        from apache_beam.io.filesystems import CompressionTypes, FileSystems

        opened = FileSystems.open(path, compression_type=CompressionTypes.UNCOMPRESSED)
    else:
        opened = open(path, "rb")
    with opened as fh:
        while block := fh.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def verify_files(files, hashes_path: str) -> dict:
    """Check every file of ``files`` against ``hashes_path`` (matched by file name).

    Returns ``{name: sha256}``. Raises UserError, one line naming the file, for the first
    file that is not listed or whose digest differs.
    """
    expected = read_hashes(hashes_path)
    checked = {}
    for path in files:
        name = os.path.basename(path.rstrip("/"))
        if name not in expected:
            raise UserError(f"{path}: not listed in {hashes_path}")
        actual = file_sha256(path)
        if actual != expected[name]:
            raise UserError(f"{path}: SHA-256 {actual} does not match {expected[name]} in {hashes_path} "
                            "(a corrupt or different download)")
        checked[name] = actual
    return checked
