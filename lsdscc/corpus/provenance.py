"""Which dump files a dataset was built from: names, sizes, SHA-256 digests, records, times.

- :class:`FileTally` follows one input file while the reader reads it: :meth:`FileTally.tap`
  wraps the stored (still compressed) file so every byte read also feeds SHA-256, so the
  digest costs no second pass over the data. Its :meth:`~FileTally.summary` is what
  ``stats.json``, ``dataset_meta.json`` and the card list per file.
- :func:`read_hashes` reads Arctic Shift's ``hashes.txt`` (``<sha256>  <file path>`` a line,
  as ``sha256sum`` writes it), keyed by the whole path listed; with ``--verify-hashes``,
  :func:`check_listed` checks before the build that every input is listed, and the reader
  compares each file's digest, computed while it parses it (:func:`digest_problem`): one pass
  over each file, so a FIFO works too. A mismatch fails the build before anything is published.
"""

from __future__ import annotations

import hashlib
import os
import re

from multiref.util.errors import UserError
from multiref.util.location import Location, is_remote

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
        if self.first is None:
            self.first = self.last = created
            return
        if created < self.first:  # (min() and max() as comparisons: a call less per record)
            self.first = created
        if created > self.last:
            self.last = created

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
    merged.pop("hash_problem", None)
    if hashed and hashed[0].get("hash_problem"):
        merged["hash_problem"] = hashed[0]["hash_problem"]
    for key, pick in (("first_created_utc", min), ("last_created_utc", max)):
        times = [s[key] for s in summaries if s[key] is not None]
        merged[key] = pick(times) if times else None
    return merged


def _components(path: str) -> tuple:
    """A local path's absolute components, or a remote path's (``gs://b/x/f`` -> ``gs:``, ``b``, ...)."""
    if not is_remote(path):
        path = os.path.abspath(path)
    return tuple(c for c in path.replace(os.sep, "/").split("/") if c)


def _key(name: str) -> tuple:
    """A ``hashes.txt`` file name as path components (``./a/b.zst``, ``*a/b.zst`` -> ``a``, ``b.zst``)."""
    name = name.lstrip("*").replace("\\", "/")
    return tuple(c for c in os.path.normpath(name).replace(os.sep, "/").split("/") if c and c != ".")


def read_hashes(path: str) -> dict:
    """``{file path as listed (components): sha256 hex}`` of a ``hashes.txt`` (``sha256sum``
    format; blank lines and ``#`` comments skipped). UserError naming the file and line for
    anything else."""
    if not os.path.isfile(path):
        raise UserError(f"hashes file not found: {path}")
    out: dict = {}
    with open(path, "rb") as fh:
        for number, raw in enumerate(fh, start=1):
            text = raw.decode("utf-8", "replace").strip()
            if not text or text.startswith("#"):
                continue
            m = _HASH_LINE.match(text)
            if not m or not _key(m[2]):
                raise UserError(f"{path}:{number}: expected '<sha256>  <file name>', got {text[:80]!r}")
            out[_key(m[2])] = m[1].lower()
    if not out:
        raise UserError(f"{path}: no '<sha256>  <file name>' lines")
    return out


def listed_digest(path: str, hashes: dict) -> str | None:
    """The digest ``hashes`` (:func:`read_hashes`) lists for ``path``: the entry whose path is
    the longest tail of ``path``'s (``2017/RC_2017-01.zst`` before ``RC_2017-01.zst``), so two
    inputs of one name in different folders each find their own line; None when none is."""
    parts = _components(path)
    best = None
    for key, digest in hashes.items():
        if len(key) <= len(parts) and parts[len(parts) - len(key):] == key and (best is None or len(key) > len(best[0])):
            best = (key, digest)
    return None if best is None else best[1]


def digest_problem(path: str, actual: str, hashes: dict, hashes_path: str) -> str | None:
    """One line saying why ``path``, read with digest ``actual``, fails ``--verify-hashes``, or None."""
    expected = listed_digest(path, hashes)
    if expected is None:
        return f"{path}: not listed in {hashes_path}"
    if actual != expected:
        return (f"{path}: SHA-256 {actual} does not match {expected} in {hashes_path} "
                "(a corrupt or different download)")
    return None


def check_listed(files, hashes_path: str) -> dict:
    """``--verify-hashes`` before the job: ``hashes_path`` read and every local input listed in
    it (UserError naming the first that is not); nothing is read from the inputs. Their digests
    are checked while the job reads them (:meth:`FileTally.summary` gains ``hash_problem``,
    see :func:`digest_problem`), so every file, a FIFO included, is read once. Returns the
    hashes (:func:`read_hashes`)."""
    hashes = read_hashes(hashes_path)
    for path in files:
        if not is_remote(path) and listed_digest(path, hashes) is None:
            raise UserError(f"{path}: not listed in {hashes_path}")
    return hashes


def hash_problems(summaries) -> list:
    """The ``hash_problem`` lines of the files' summaries (:func:`digest_problem`), in order."""
    return [s["hash_problem"] for s in summaries if s.get("hash_problem")]
