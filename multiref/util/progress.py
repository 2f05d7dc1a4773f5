"""Progress of long steps on standard error.

Shown when standard error is a terminal, hidden otherwise (logs stay clean) unless the user
asks with ``--progress``; ``--quiet`` hides it always. The CLI calls :func:`configure` once;
the choice is kept in the environment (``MULTIREF_PROGRESS=on|off|auto``) so Beam worker
processes started by the build inherit it. Library code calls::

    with progress.task("Doc2Vec training", total=epochs, unit="epochs") as bar:
        for ...:
            bar.update()
    for row in progress.iterate(rows, "scoring bleu1", total=len(rows)):
        ...
    with progress.step("Lucene index"):      # no count: start line, then elapsed time
        ...
    fh = progress.ByteReader(open(path, "rb"), "reading RC_2017-01.zst", total=size)

On a terminal one line is redrawn at most twice a second; otherwise (``--progress`` into a
file) a line is written every ``PLAIN_INTERVAL`` seconds and at the end. Counting costs one
addition per update when progress is off. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

ENV = "MULTIREF_PROGRESS"
TTY_INTERVAL = 0.5
PLAIN_INTERVAL = 5.0


def configure(*, quiet: bool = False, force: bool = False) -> None:
    """Set the mode for this process and the processes it starts."""
    os.environ[ENV] = "off" if quiet else ("on" if force else "auto")


@contextlib.contextmanager
def configured(*, quiet: bool = False, force: bool = False):
    """:func:`configure` for the duration of a ``with`` block (one CLI command)."""
    before = os.environ.get(ENV)
    configure(quiet=quiet, force=force)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before


def enabled(stream=None) -> bool:
    """Whether progress goes to ``stream`` (default stderr) in the configured mode."""
    mode = os.environ.get(ENV, "auto")
    if mode in ("on", "off"):
        return mode == "on"
    stream = stream or sys.stderr
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def quiet() -> bool:
    """True when the user asked for ``--quiet`` (notes are skipped too)."""
    return os.environ.get(ENV) == "off"


def _number(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 or float(value).is_integer() else f"{value:,.1f}"


def _bytes(value: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:,.1f} {unit}" if unit != "B" else f"{value:,.0f} B"
        value /= 1024
    return f"{value:,.1f} GB"  # pragma: no cover


class Progress:
    """A counter that redraws a status line on stderr when progress is enabled."""

    def __init__(self, label: str, total: float | None = None, unit: str = "items", stream=None):
        self.label, self.total, self.unit = label, total, unit
        self.stream = stream or sys.stderr
        self.done = 0
        self.extra = ""
        self.start = time.perf_counter()
        self.active = enabled(self.stream)
        self.tty = self.active and _isatty(self.stream)
        self._last = 0.0
        if self.active and not self.tty:
            self._write(f"{self.label} ...")

    def update(self, n: float = 1, extra: str | None = None) -> None:
        """Count ``n`` more units (``extra``: a short note shown after the counts)."""
        self.done += n
        if extra is not None:
            self.extra = extra
        if self.active:
            now = time.perf_counter()
            if now - self._last >= (TTY_INTERVAL if self.tty else PLAIN_INTERVAL):
                self._last = now
                self._write(self.status(now))

    def status(self, now: float | None = None) -> str:
        """``label: 45% 1,234/2,700 items, 321 items/s, 3.2 s``."""
        elapsed = (now or time.perf_counter()) - self.start
        fmt = _bytes if self.unit == "bytes" else _number
        parts = []
        if self.total:
            parts.append(f"{100 * self.done / self.total:.0f}% {fmt(self.done)}/{fmt(self.total)} {self.unit}")
        elif self.done:
            parts.append(f"{fmt(self.done)} {self.unit}")
        if self.done and elapsed > 0:
            parts.append(f"{fmt(self.done / elapsed)} {self.unit}/s")
        parts.append(f"{elapsed:.1f} s")
        if self.extra:
            parts.append(self.extra)
        return f"{self.label}: {', '.join(parts)}"

    def close(self) -> None:
        if self.active:
            self._write(self.status() + " (done)", final=True)
            self.active = False

    def _write(self, text: str, final: bool = False) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        elif self.active and self.tty:
            self.stream.write("\n")  # keep the error line on a line of its own
        return False


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def task(label: str, total: float | None = None, unit: str = "items") -> Progress:
    """A progress counter; use as a context manager, call ``update(n)``."""
    return Progress(label, total, unit)


def iterate(iterable, label: str, total: float | None = None, unit: str = "items"):
    """Yield from ``iterable``, counting each item."""
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    with Progress(label, total, unit) as bar:
        for item in iterable:
            yield item
            bar.update()


@contextlib.contextmanager
def step(label: str):
    """A step without a count: its elapsed time is shown while it runs and at the end.

    A background thread redraws the line (terminal: twice a second; --progress into a
    file: every PLAIN_INTERVAL seconds), so a long call that reports nothing still shows life.
    """
    import threading

    with Progress(label, None, "") as bar:
        stop = threading.Event()
        if bar.active:
            interval = TTY_INTERVAL if bar.tty else PLAIN_INTERVAL
            threading.Thread(target=_tick, args=(bar, stop, interval), daemon=True).start()
        try:
            yield bar
        finally:
            stop.set()


def _tick(bar: Progress, stop, interval: float) -> None:
    while not stop.wait(interval):
        bar.update(0)


class ByteReader:
    """A binary file wrapper that counts bytes and lines read (for reading dumps).

    ``ByteReader(open(path, "rb"), f"reading {path}", total=os.path.getsize(path))`` shows
    bytes, bytes/s and lines/s; closing it closes the file and ends the line. For a
    compressed file pass ``count_lines=False`` and set ``lines`` from the decompressed text.
    """

    def __init__(self, raw, label: str, total: int | None = None, count_lines: bool = True):
        self.raw = raw
        self.bar = Progress(label, total, "bytes")
        self.lines = 0
        self.count_lines = count_lines  # False for compressed data: the caller sets ``lines``

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self._count(data)
        return data

    def readline(self, size: int = -1) -> bytes:
        data = self.raw.readline(size)
        self._count(data)
        return data

    def __iter__(self):
        for line in self.raw:
            self._count(line)
            yield line

    def _count(self, data: bytes) -> None:
        if self.count_lines:
            self.lines += data.count(b"\n")
        self.bar.update(len(data), extra=self._rate())

    def lines_read(self, lines: int) -> None:
        """Set the line count (``count_lines=False``: lines of the decompressed text)."""
        self.lines = lines
        self.bar.extra = self._rate()

    def _rate(self) -> str:
        elapsed = time.perf_counter() - self.bar.start
        return f"{self.lines:,} lines, {self.lines / elapsed:,.0f} lines/s" if elapsed > 0 and self.lines else ""

    def close(self) -> None:
        self.bar.close()
        self.raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __getattr__(self, name):  # seek, tell, readable, ... of the wrapped file
        return getattr(self.raw, name)
