"""The one guard every output path of every command goes through (issue 35, faults 1, 2 and 27).

- :func:`check_output`: refuse, before any work, an output that **is one of the command's inputs**
  (the same path, a symlink to it or a hard link of it) or that **lies inside a dataset folder**
  this tool published (its files are the dataset: ``--output ds/README.md`` would make it
  unloadable). One line names both paths. It also checks that the output can be written.
  Folder outputs (:func:`multiref.output.publish.publishing`) call :func:`check_inside_dataset`
  for the second rule; the first is :func:`multiref.output.publish_target.check_local`'s.
- :func:`write_atomically`: a single-file output is written under a temporary name beside it,
  then renamed over it, so a reader (or a crash) never sees half a file.
- :func:`sidecar_name`: ``.NAME.<kind>`` beside a path, shortened (with a digest of the full
  name, so it stays one per target) when it would pass the filesystem's 255-byte name limit:
  a legal 250-byte output name must work.

Standard library only.
"""

from __future__ import annotations

import hashlib
import os
from typing import Callable, Iterable

from multiref.util.errors import UserError
from multiref.util.location import is_remote

NAME_MAX = 255  # bytes in one file name on Linux filesystems (ext4, xfs, tmpfs, btrfs)


class OutputIsInput(UserError):
    """The output would write over one of the command's inputs or a file of a dataset folder."""


def sidecar_name(path: str, kind: str, *, hidden: bool = True) -> str:
    """``PARENT/.NAME.<kind>`` for ``path`` (``PARENT/NAME.<kind>`` when not ``hidden``); when
    that name would pass :data:`NAME_MAX` bytes, NAME is cut and followed by ``~`` and 12 hex
    digits of its sha256, so the name stays legal and one per ``path``."""
    folder, name = os.path.split(os.path.abspath(path))
    dot = "." if hidden else ""
    if len(os.fsencode(f"{dot}{name}.{kind}")) <= NAME_MAX:
        return os.path.join(folder, f"{dot}{name}.{kind}")
    digest = hashlib.sha256(os.fsencode(name)).hexdigest()[:12]
    room = NAME_MAX - len(os.fsencode(f"{dot}~{digest}.{kind}"))
    start = os.fsencode(name)[:max(room, 0)].decode("utf-8", "ignore")  # whole characters only
    return os.path.join(folder, f"{dot}{start}~{digest}.{kind}")


def dataset_folder_of(path: str) -> str | None:
    """The nearest folder at or above ``path``'s parent that is a dataset this tool published, or None."""
    from multiref.output.publish_target import is_published

    folder = os.path.dirname(os.path.realpath(path))
    while True:
        if is_published(folder):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def check_inside_dataset(path: str, flag: str) -> None:
    """:class:`OutputIsInput` when ``path`` lies inside a dataset folder this tool published."""
    found = dataset_folder_of(path)
    if found is not None:
        raise OutputIsInput(f"refusing to write {flag} {path}: it lies inside the dataset folder {found}, whose "
                            "files are the dataset; nothing was written (choose a path outside it)")


def _same_file(a: str, b: str) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        return os.path.samefile(a, b)  # a hard link of the input is the input
    except OSError:
        return False


def check_output(path: str | None, flag: str, inputs: Iterable[str | None] = ()) -> str | None:
    """Return ``path`` (a single-file output given as ``flag``) when it may be written: it is
    none of ``inputs`` (paths; ``-`` and remote ones are skipped), does not lie inside a dataset
    folder, is not a folder, and its folder is writable. Else a one-line :class:`UserError`
    naming the output and the input or dataset. Call it before any work starts."""
    from multiref.util.files import require_writable

    if not path or path == "-" or is_remote(path):
        return path
    for given in inputs:
        if given and given != "-" and not is_remote(str(given)) and _same_file(path, os.fspath(given)):
            raise OutputIsInput(f"refusing to write {flag} {path}: it is the input {given}; nothing was written "
                                "(choose another output path)")
    check_inside_dataset(path, flag)
    if os.path.isdir(path):
        raise UserError(f"{flag} {path}: is a folder; give a file path")
    return require_writable(path, flag)


def check_output_folder(path: str | None, flag: str, inputs: Iterable[str | None] = ()) -> str | None:
    """:func:`check_output` for a folder a command writes files into (``analyze --output DIR``,
    ``annotate import --output DIR``): it is none of ``inputs``, is not itself a dataset folder
    nor inside one, and is not a file."""
    if not path or is_remote(path):
        return path
    for given in inputs:
        if given and given != "-" and not is_remote(str(given)) and _same_file(path, os.fspath(given)):
            raise OutputIsInput(f"refusing to write {flag} {path}: it is the input {given}; nothing was written "
                                "(choose another output folder)")
    check_inside_dataset(os.path.join(path, "_"), flag)  # the folder itself or one above it
    if os.path.lexists(path) and not os.path.isdir(path):
        raise UserError(f"{flag} {path}: is a file; give a folder")
    return path


def write_atomically(path: str, content: str | bytes | Callable) -> None:
    """Write ``content`` (text, bytes, or a function given a text file handle) to ``path``
    under a unique temporary name beside it (a hidden name within :data:`NAME_MAX` bytes), then
    rename it over ``path`` (a symlink is written where it points). On any error the temporary
    file is removed and ``path`` is as it was."""
    import tempfile

    path = os.path.realpath(path)
    folder, name = os.path.split(path)
    prefix = "." + os.fsencode(name)[:NAME_MAX - 24].decode("utf-8", "ignore") + "."
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb" if isinstance(content, bytes) else "w", **_text(content)) as fh:
            content(fh) if callable(content) else fh.write(content)
            fh.flush()
            os.fsync(fh.fileno())
        mode = os.stat(path).st_mode & 0o7777 if os.path.exists(path) else 0o666 & ~_umask()
        os.chmod(tmp, mode)  # mkstemp's file is 0600: keep the old file's mode, else the usual one
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise


def _text(content) -> dict:
    return {} if isinstance(content, bytes) else {"encoding": "utf-8", "newline": ""}


def _umask() -> int:
    """The process's umask, read without setting it (``os.umask`` would race other threads)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022
