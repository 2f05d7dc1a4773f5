"""Atomic publishing of dataset folders (docs/data-safety.md; git's lock files, HF datasets' cache).

A command that writes a dataset folder ``TARGET`` does it inside :func:`publishing`::

    with publishing("out/lsdscc", command="multiref lsdscc build") as pub:
        build_into(pub.staging)          # a fresh folder beside TARGET (same filesystem)
    # here TARGET is the new dataset; on any error or interrupt it is the old one, untouched

- **Staging**: the work happens in ``PARENT/.NAME.staging``; with ``seed=True`` it starts as a
  copy of TARGET (hard links for files the command never rewrites in place, real copies for
  the ``copy`` patterns), so commands that add a config to an existing folder never touch it.
- **Swap**: on success the staging folder and TARGET are exchanged in one system call
  (Linux ``renameat2(RENAME_EXCHANGE)`` through ctypes); where that is unsupported, two
  renames, with a ``PARENT/.NAME.ready`` marker so the next run finishes a half-done swap.
  The old dataset then goes to ``PARENT/.NAME.old`` and is deleted. SIGINT and SIGTERM are
  blocked during the swap. At every instant TARGET is the complete old or the complete new
  dataset (with the fallback: or briefly absent, repaired by the next run).
- **Lock**: ``PARENT/.NAME.lock`` holds an exclusive ``flock`` and says who holds it (pid,
  host, start time, command). A second build exits at once naming them
  (:class:`FolderLocked`); a lock left by a process that is gone is taken over with a warning.
- **Interrupts**: SIGINT and SIGTERM become :class:`Interrupted` (one line, exit
  130, as for any interrupted command). A failed or interrupted build leaves its partial output in the staging folder; the next
  build on TARGET removes it, after taking back what ``reuse`` names (a build cache).
- **Remote TARGET** (``gs://...``): :mod:`multiref.output.publish_remote` (a marker written last).
"""

from __future__ import annotations

import contextlib
import ctypes
import datetime
import errno
import fnmatch
import json
import os
import shutil
import socket
import sys
from typing import Iterable, Iterator, Sequence

from multiref.output import publish_target
from multiref.output.file_output import check_inside_dataset, sidecar_name
from multiref.util.errors import UserError
from multiref.output.publish_guard import FolderLocked, Interrupted, SignalGuard as _SignalGuard  # noqa: F401
from multiref.output.publish_guard import signals_blocked as _signals_blocked, warn as _warn
from multiref.util.location import is_remote

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def sidecar(target: str, kind: str) -> str:
    """``PARENT/.NAME.<kind>``: the staging, old, ready, lock and leftover paths of ``target``."""
    return sidecar_name(target, kind)  # shortened when ``.NAME.<kind>`` would pass 255 bytes


# ---------------------------------------------------------------- lock


class Lock:
    """An exclusive lock on a dataset folder: ``flock`` on ``PARENT/.NAME.lock``.

    The kernel releases a ``flock`` when its process dies (even by SIGKILL), so a lock file
    that can be locked but still holds a holder's description was left by a process that is
    gone: it is taken over with a warning. Raises :class:`FolderLocked` when held.
    """

    def __init__(self, target: str, command: str):
        self.target = os.path.abspath(target)
        self.path = sidecar(target, "lock")
        self.command = command
        self.fd = None

    def acquire(self) -> "Lock":
        import fcntl

        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                os.close(fd)
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
                raise FolderLocked(self._held_message()) from None
            try:  # the holder may have removed the file between our open and our flock
                same = os.fstat(fd).st_ino == os.stat(self.path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)
        self.fd = fd
        previous = _read_holder(fd)
        if previous:
            _warn(f"warning: took over the stale lock of {self.target}: the build of pid {previous.get('pid')} on "
                  f"{previous.get('host')} started {previous.get('started')} is gone")
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "command": self.command,
                  "started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(holder, sort_keys=True) + "\n").encode("utf-8"), 0)
        os.fsync(fd)
        return self

    def _held_message(self) -> str:
        try:
            with open(self.path, encoding="utf-8") as fh:
                holder = json.loads(fh.read() or "{}")
        except (OSError, ValueError):
            holder = {}
        who = (f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}, started {holder.get('started', '?')}"
               f" ({holder.get('command', 'a build')})")
        return f"{self.target} is being written by another build: {who}; wait for it to finish or stop it"

    def release(self) -> None:
        if self.fd is None:
            return
        with contextlib.suppress(FileNotFoundError):
            os.remove(self.path)  # still holding the flock: nobody can take a half-removed lock
        os.close(self.fd)
        self.fd = None


def _read_holder(fd: int) -> dict:
    """The description a previous holder left in the lock file ({} when empty)."""
    data = os.pread(fd, 65536, 0)
    if not data.strip():
        return {}
    try:
        return json.loads(data)
    except ValueError:
        return {"pid": "?", "host": "?", "started": "?"}


# ---------------------------------------------------------------- copying and swapping


def _matches(rel: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(rel, p.rstrip("/") + "/*") for p in patterns)


def link_tree(src: str, dst: str, copy: Sequence[str] = ()) -> None:
    """Recreate folder ``src`` at ``dst``: hard links, except files whose path relative to
    ``src`` matches a ``copy`` pattern (fnmatch; ``dir/*`` matches below ``dir``), which are
    copied. Hard links are only safe for files nobody opens for writing in place; a file
    that is replaced (written elsewhere, then renamed or removed and recreated) is fine."""
    for root, dirs, files in os.walk(src):
        dirs.sort()
        rel_root = os.path.relpath(root, src)
        out_root = dst if rel_root == "." else os.path.join(dst, rel_root)
        os.makedirs(out_root, exist_ok=True)
        for name in sorted(files):
            rel = name if rel_root == "." else os.path.join(rel_root, name)
            source, target = os.path.join(root, name), os.path.join(out_root, name)
            if _matches(rel, copy):
                shutil.copy2(source, target)
                continue
            try:
                os.link(source, target)
            except OSError:  # another filesystem, or links not supported: copy
                shutil.copy2(source, target)


def exchange(a: str, b: str) -> bool:
    """Atomically exchange two paths (Linux ``renameat2(RENAME_EXCHANGE)``). Returns False when
    the system or filesystem does not support it (then nothing was changed)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), a)


def swap_in(staging: str, target: str, *, use_exchange: bool = True) -> None:
    """Make the complete folder ``staging`` the ``target``; the old target is left in
    ``PARENT/.NAME.old`` for the caller (or the next run) to delete."""
    old, ready = sidecar(target, "old"), sidecar(target, "ready")
    _remove(old)
    with _signals_blocked():
        if not os.path.lexists(target):
            os.rename(staging, target)
        elif use_exchange and exchange(staging, target):
            os.rename(staging, old)  # staging now holds the previous dataset
        else:
            _fsync_touch(ready)  # tells the next run that staging is complete
            os.rename(target, old)
            os.rename(staging, target)
            os.remove(ready)
        _fsync_dir(os.path.dirname(os.path.abspath(target)))


def repair(target: str) -> list:
    """Finish or undo a swap that a crash cut short, and clear old sidecars. Call under the
    lock. Returns notes for the user."""
    notes = []
    staging, old, ready = sidecar(target, "staging"), sidecar(target, "old"), sidecar(target, "ready")
    if not os.path.lexists(target):
        if os.path.exists(ready) and os.path.isdir(staging):
            os.rename(staging, target)
            notes.append(f"finished publishing {target}, which an interrupted build had left half-swapped")
        elif os.path.isdir(old):
            os.rename(old, target)
            notes.append(f"restored {target} from {old}, left by an interrupted build")
    with contextlib.suppress(FileNotFoundError):
        os.remove(ready)
    if os.path.lexists(target):
        _remove(old)
    return notes


def _fsync_touch(path: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)


def _remove_if_empty(path: str) -> None:
    """Remove the folder ``path`` if it holds nothing (``os.rmdir`` refuses any other)."""
    try:
        os.rmdir(path)
    except OSError:
        pass


# ---------------------------------------------------------------- the context


class Publication:
    """What :func:`publishing` yields: where to write, and the folder being replaced."""

    def __init__(self, target: str, staging: str, leftover: str):
        self.target = os.path.abspath(target)
        self.staging = staging
        self.leftover = leftover  # a previous run's partial output, or a missing path
        self.previous = self.target if os.path.isdir(self.target) else None
        self.notes: list = []  # printed on stderr after a successful publish
        self.abandoned = False
        self.published = False

    def abandon(self) -> None:
        """Publish nothing (e.g. a dry run): the staging folder is removed, the target kept."""
        self.abandoned = True

    def bring(self, patterns: Sequence[str]) -> list:
        """Put into staging the cache entries named by ``patterns`` (relative paths, fnmatch)
        that it lacks: moved from a previous run's partial output, else hard-linked from the
        current target. Returns the relative paths brought."""
        brought = []
        for source, move in ((self.leftover, True), (self.previous, False)):
            if not source or not os.path.isdir(source):
                continue
            for rel in _top_matches(source, patterns):
                dst = os.path.join(self.staging, rel)
                if os.path.lexists(dst):
                    continue
                os.makedirs(os.path.dirname(dst), exist_ok=True)
                if move:
                    os.rename(os.path.join(source, rel), dst)
                elif os.path.isdir(os.path.join(source, rel)):
                    link_tree(os.path.join(source, rel), dst)
                else:
                    os.link(os.path.join(source, rel), dst)
                brought.append(rel)
        return sorted(brought)


def _top_matches(folder: str, patterns: Sequence[str]) -> list:
    """Relative paths (files or folders) under ``folder`` matching a pattern, outermost only."""
    out = []
    for root, dirs, files in os.walk(folder):
        rel_root = os.path.relpath(root, folder)
        for name in sorted(dirs) + sorted(files):
            rel = name if rel_root == "." else os.path.join(rel_root, name)
            if any(fnmatch.fnmatch(rel, p) for p in patterns):
                out.append(rel)
        dirs[:] = [d for d in dirs if not any(fnmatch.fnmatch(d if rel_root == "." else os.path.join(rel_root, d), p)
                                              for p in patterns)]
    return out


@contextlib.contextmanager
def publishing(target: str, *, command: str, seed: bool = False, copy: Iterable[str] = (),
               inputs: Iterable[str] = (), use_exchange: bool = True) -> Iterator[Publication]:
    """Lock ``target``, hand out a staging folder, swap it in when the block succeeds.

    ``target`` must be absent, empty or a dataset this tool published, and must not be or hold
    one of the command's ``inputs`` (paths or globs): else :class:`NotOurFolder`, nothing
    touched (:mod:`multiref.output.publish_target`). A symlink is followed: the dataset is published
    where it points and the link stays. ``seed=True`` starts the staging folder as a copy of
    ``target`` (hard links, except the ``copy`` patterns: files the command rewrites in place,
    such as ``dataset_meta.json``). On an exception nothing is published; SIGINT/SIGTERM raise
    :class:`Interrupted`; an OS error on the output (a full disk) a one-line UserError, with
    the staging folder removed.
    """
    inputs = [os.fspath(i) for i in inputs]
    if is_remote(target):
        from multiref.output.publish_remote import publishing_remote

        with publishing_remote(target, command=command, inputs=inputs) as pub:
            yield pub
        return
    target = os.path.realpath(target)
    if os.path.lexists(target) and not os.path.isdir(target):
        raise UserError(f"output is not a folder: {target}")
    publish_target.check_local(target, inputs)  # before the lock: a refused folder gets no sidecar
    check_inside_dataset(target, "--output")
    staging, leftover = sidecar(target, "staging"), sidecar(target, "leftover")
    guard = _SignalGuard()
    try:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        lock = Lock(target, command).acquire()
    except OSError as exc:
        raise UserError(f"cannot write to output folder {target}: {exc.strerror or exc}") from None
    pub = None
    try:
        with guard:
            pub = _prepare(target, staging, leftover, seed, list(copy), inputs)
            yield pub
            if guard.received:  # a Beam worker swallowed the KeyboardInterrupt
                raise KeyboardInterrupt
            if pub.abandoned:
                _remove(staging)
            else:
                swap_in(staging, target, use_exchange=use_exchange)
                pub.published = True
                _remove(sidecar(target, "old"))
    except BaseException as exc:
        if pub is not None and not pub.published:
            _remove_if_empty(staging)  # a mistake found before anything was written leaves nothing
        _explain(exc, guard.received, pub is not None and pub.published, target, staging)
        raise
    finally:
        _remove(leftover)
        lock.release()
    for note in pub.notes:
        if note:
            _warn(note)


def _explain(exc: BaseException, received, published: bool, target: str, staging: str) -> None:
    """Raise what a build that failed with ``exc`` means for the user: :class:`Interrupted`
    after SIGINT/SIGTERM (``received``); a one-line UserError, with the staging folder removed,
    for an OS error on the output (:func:`multiref.output.publish_target.output_error`). Returns for
    anything else (the caller re-raises ``exc``)."""
    if received and published:
        raise Interrupted(f"interrupted by {received} after {target} was published whole (the previous "
                          "copy beside it is removed by the next build)") from exc
    if received:
        raise Interrupted(f"interrupted by {received}: {target} is unchanged (the partial build in "
                          f"{staging} is cleaned up by the next build)") from exc
    failed = publish_target.output_error(exc, target, [target, staging]) if isinstance(exc, Exception) else None
    if failed is not None and not published:
        _remove(staging)  # frees the space; a full disk keeps no cache
        raise failed from exc


def _prepare(target: str, staging: str, leftover: str, seed: bool, copy: list, inputs: list) -> Publication:
    """Repair a cut swap, check the target again (under the lock, once repaired: it may have
    changed since the first check), set a previous run's partial output aside, make the
    staging folder."""
    for note in repair(target):
        _warn(note)
    publish_target.check_local(target, inputs)
    _remove(leftover)
    if os.path.lexists(staging):
        _warn(f"found the partial output of an earlier build that did not finish in {staging}: "
              "its cache is reused, the rest removed")
        os.rename(staging, leftover)
    pub = Publication(target, staging, leftover)
    if seed and pub.previous:
        link_tree(target, staging, copy=copy)
    else:
        os.makedirs(staging)
    return pub
