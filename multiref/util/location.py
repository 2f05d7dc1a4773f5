"""Where data lives: a local path or a remote URL (``gs://BUCKET/...``, or any other scheme
Apache Beam's ``FileSystems`` knows). The one place that tells them apart.

- :func:`is_remote` / :func:`is_local`: the test the jobs and commands ask (a URL has a
  ``scheme://``; anything else, including a relative path, is local);
- :class:`Location`: a location with the operations the code needs on either kind: ``join``,
  ``name``, ``exists``, ``open``; remote ones go through Beam's ``FileSystems`` (imported
  only when used, so the core imports without Beam).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

#: What separates a URL's scheme from the rest (``gs://bucket/x``).
SCHEME_SEPARATOR = "://"


def is_remote(path) -> bool:
    """True for a URL with a scheme (``gs://bucket/x``); False for a local path or nothing."""
    return bool(path) and SCHEME_SEPARATOR in os.fspath(path)


def is_local(path) -> bool:
    """True for a local path (absolute or relative); False for a URL."""
    return not is_remote(path)


def without_scheme(url: str) -> str:
    """``bucket/x`` of ``gs://bucket/x`` (a local path is returned as it is)."""
    return url.split(SCHEME_SEPARATOR, 1)[-1]


@dataclass(frozen=True)
class Location:
    """A local path or a remote URL, as the user gave it (``str(location)`` is that text)."""

    text: str

    def __post_init__(self):
        object.__setattr__(self, "text", os.fspath(self.text))

    def __str__(self) -> str:
        return self.text

    @property
    def is_remote(self) -> bool:
        return is_remote(self.text)

    def join(self, *parts: str) -> "Location":
        """A location inside this one: :func:`os.path.join` for a path; for a URL, each part
        after a ``/`` (one added unless the text ends with one), as Beam's ``FileSystems.join``
        joins ``gs://`` paths."""
        if not self.is_remote:
            return Location(os.path.join(self.text, *parts))
        text = self.text
        for part in parts:
            text += part if text.endswith("/") else "/" + part
        return Location(text)

    @property
    def name(self) -> str:
        """The last component (a URL's last segment; a path's folder or file name, made absolute first)."""
        if self.is_remote:
            return self.text.rstrip("/").rsplit("/", 1)[-1]
        return os.path.basename(os.path.abspath(self.text))

    def exists(self) -> bool:
        if not self.is_remote:
            return os.path.exists(self.text)
        from apache_beam.io.filesystems import FileSystems

        return FileSystems.exists(self.text)

    def open(self, mode: str = "rb"):
        """A binary file object: read (``"rb"``) or write (``"wb"``); remote ones uncompressed."""
        if mode not in ("rb", "wb"):
            raise ValueError(f"mode must be 'rb' or 'wb', not {mode!r}")
        if not self.is_remote:
            return open(self.text, mode)
        from apache_beam.io.filesystems import CompressionTypes, FileSystems

        if mode == "rb":
            return FileSystems.open(self.text, compression_type=CompressionTypes.UNCOMPRESSED)
        return FileSystems.create(self.text, compression_type=CompressionTypes.UNCOMPRESSED)
