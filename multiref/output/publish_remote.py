"""Publishing a dataset folder on an object store (``gs://...``) through Beam's FileSystems.

An object store has no atomic folder rename, so a remote dataset is trusted by its marker:
**a reader uses ``TARGET`` only when ``TARGET/_SUCCESS`` exists, and reads only the files
listed in ``TARGET/_MANIFEST.json``** (path, size). The protocol:

1. the build writes into ``PARENT/.NAME.staging/`` (deleted first if a run left it);
2. when it succeeded: ``_MANIFEST.json`` then ``_SUCCESS`` in the staging folder;
3. publish: delete ``TARGET/_SUCCESS`` (from here on readers see no dataset), copy every
   listed file into ``TARGET``, delete ``TARGET``'s files the manifest does not list, write
   ``TARGET/_MANIFEST.json`` and, last, ``TARGET/_SUCCESS``; delete the staging folder.

A crash before step 3 leaves ``TARGET`` as it was. A crash during step 3 leaves ``TARGET``
without ``_SUCCESS`` (untrusted) and the complete new dataset, with its marker, in the
staging folder: the next run on ``TARGET`` finishes the copy before anything else. Unlike a
local folder, there is a window in which ``TARGET`` has no complete dataset.

The lock is an object, ``PARENT/.NAME.lock``, checked then written (object stores have no
exclusive create in FileSystems: two builds started in the same second can both pass): a
lock from this host whose process is gone is taken over with a warning; one from another
host stops the build with a line naming it (delete the lock object if that build is gone).

These functions work on any path FileSystems knows, so the tests run them on local folders.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import socket
from typing import Iterator

from multiref.util.errors import UserError
from multiref.util.location import without_scheme

MANIFEST = "_MANIFEST.json"
SUCCESS = "_SUCCESS"


def _fs():
    from apache_beam.io.filesystems import FileSystems

    return FileSystems


def _split(target: str) -> tuple:
    target = target.rstrip("/")
    parent, name = target.rsplit("/", 1)
    return parent, name


def sidecar(target: str, kind: str) -> str:
    parent, name = _split(target)
    return f"{parent}/.{name}.{kind}"


def _write(path: str, data: bytes) -> None:
    from apache_beam.io.filesystem import CompressionTypes

    with _fs().create(path, compression_type=CompressionTypes.UNCOMPRESSED) as fh:
        fh.write(data)


def _read(path: str) -> bytes:
    from apache_beam.io.filesystem import CompressionTypes

    with _fs().open(path, compression_type=CompressionTypes.UNCOMPRESSED) as fh:
        return fh.read()


def list_files(folder: str) -> dict:
    """``{relative path: size}`` of every file under ``folder`` ({} when there is none)."""
    folder = folder.rstrip("/")
    out = {}
    for result in _fs().match([folder + "/**"]):
        for m in result.metadata_list:
            out[m.path[len(folder) + 1:]] = m.size_in_bytes
    return out


def write_manifest(folder: str) -> dict:
    """Write ``_MANIFEST.json`` listing every file of ``folder``, then ``_SUCCESS``."""
    files = {k: v for k, v in list_files(folder).items() if k not in (MANIFEST, SUCCESS)}
    manifest = {"files": [{"path": k, "size": files[k]} for k in sorted(files)]}
    _write(f"{folder.rstrip('/')}/{MANIFEST}", (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode())
    _write(f"{folder.rstrip('/')}/{SUCCESS}", b"")
    return manifest


def is_complete(folder: str) -> bool:
    """True when ``folder`` carries its ``_SUCCESS`` marker (readers trust only such folders)."""
    return _fs().exists(f"{folder.rstrip('/')}/{SUCCESS}")


def copy_published(staging: str, target: str) -> None:
    """Step 3 of the protocol (module docstring): ``staging`` must be complete."""
    from apache_beam.io.filesystem import CompressionTypes

    fs = _fs()
    staging, target = staging.rstrip("/"), target.rstrip("/")
    manifest = json.loads(_read(f"{staging}/{MANIFEST}"))
    listed = [f["path"] for f in manifest["files"]]
    if fs.exists(f"{target}/{SUCCESS}"):
        fs.delete([f"{target}/{SUCCESS}"])
    for rel in listed:  # streams, so one code path for local and remote paths
        with fs.open(f"{staging}/{rel}", compression_type=CompressionTypes.UNCOMPRESSED) as src, \
                fs.create(f"{target}/{rel}", compression_type=CompressionTypes.UNCOMPRESSED) as dst:
            for chunk in iter(lambda: src.read(1 << 20), b""):
                dst.write(chunk)
    stale = [f"{target}/{rel}" for rel in list_files(target) if rel not in listed and rel not in (MANIFEST, SUCCESS)]
    if stale:
        fs.delete(stale)
    _write(f"{target}/{MANIFEST}", _read(f"{staging}/{MANIFEST}"))
    _write(f"{target}/{SUCCESS}", b"")
    delete_tree(staging)


def delete_tree(folder: str) -> None:
    """Delete every file under ``folder`` (object stores have no folders to delete)."""
    files = list_files(folder)
    if files:
        _fs().delete([f"{folder.rstrip('/')}/{rel}" for rel in sorted(files)])


class RemoteLock:
    """The advisory lock object of a remote target (module docstring)."""

    def __init__(self, target: str, command: str):
        self.target, self.path, self.command, self.held = target, sidecar(target, "lock"), command, False

    def acquire(self) -> "RemoteLock":
        from multiref.output.publish_guard import FolderLocked, warn as _warn

        if _fs().exists(self.path):
            try:
                holder = json.loads(_read(self.path) or b"{}")
            except ValueError:
                holder = {}
            same_host = holder.get("host") == socket.gethostname()
            if not (same_host and isinstance(holder.get("pid"), int) and not _pid_alive(holder["pid"])):
                raise FolderLocked(
                    f"{self.target} is being written by another build: pid {holder.get('pid', '?')} on "
                    f"{holder.get('host', '?')}, started {holder.get('started', '?')} ({holder.get('command', 'a build')}); "
                    f"wait for it to finish, or delete {self.path} if that build is gone")
            _warn(f"warning: took over the stale lock of {self.target}: the build of pid {holder['pid']} on "
                  f"{holder['host']} started {holder.get('started')} is gone")
        holder = {"pid": os.getpid(), "host": socket.gethostname(), "command": self.command,
                  "started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}
        _write(self.path, (json.dumps(holder, sort_keys=True) + "\n").encode("utf-8"))
        self.held = True
        return self

    def release(self) -> None:
        if self.held:
            with contextlib.suppress(Exception):
                _fs().delete([self.path])
            self.held = False


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class RemotePublication:
    """What :func:`publishing_remote` yields (the same attributes as a local Publication)."""

    def __init__(self, target: str, staging: str):
        self.target, self.staging, self.previous, self.leftover = target.rstrip("/"), staging, None, None
        self.notes: list = []
        self.abandoned = False

    def abandon(self) -> None:
        self.abandoned = True

    def bring(self, patterns) -> list:  # no build cache is kept on remote folders
        return []


@contextlib.contextmanager
def publishing_remote(target: str, *, command: str, inputs=()) -> Iterator[RemotePublication]:
    """:func:`multiref.output.publish.publishing` for an object-store ``target`` (module docstring).
    A prefix holding objects this tool did not write, or one of ``inputs``, is refused
    (:func:`multiref.output.publish_target.check_remote`) before anything is written."""
    from multiref.output import publish_target
    from multiref.output.publish_guard import Interrupted, SignalGuard as _SignalGuard, warn as _warn

    target = target.rstrip("/")
    if "/" not in without_scheme(target):
        raise UserError(f"a remote output needs a folder inside the bucket, e.g. gs://BUCKET/lsdscc, not {target}")
    staging = sidecar(target, "staging")
    publish_target.check_remote_inputs(target, inputs)
    publish_target.check_remote(target, list_files(target), is_complete(staging))
    lock = RemoteLock(target, command).acquire()
    guard = _SignalGuard()
    try:
        with guard:
            if is_complete(staging) and not is_complete(target):
                copy_published(staging, target)
                _warn(f"finished publishing {target}, which an interrupted build had left half-copied")
            delete_tree(staging)
            pub = RemotePublication(target, staging)
            yield pub
            if guard.received:
                raise KeyboardInterrupt
            if pub.abandoned:
                delete_tree(staging)
            else:
                write_manifest(staging)
                copy_published(staging, target)
    except BaseException as exc:
        if guard.received:
            raise Interrupted(f"interrupted by {guard.received}: {target} is unchanged") from exc
        raise
    finally:
        lock.release()
    for note in pub.notes:
        if note:
            _warn(note)
