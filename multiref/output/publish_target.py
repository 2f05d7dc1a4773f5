"""Which folders a build may replace, and what an OS error on the output means (issue 17, items
1 and 4). Every path that publishes a dataset folder goes through here: :func:`check_local`
and :func:`check_remote` from :mod:`multiref.output.publish` and :mod:`multiref.output.publish_remote`
(``multiref lsdscc build|testset|annotate import``, ``multiref dailydialog build`` and the
``python -m pipelines.*`` entry points), :func:`output_error` from the local publish.

**Ours** is a folder this tool published: its ``dataset_meta.json`` (a JSON object with a
``configs`` mapping, written by :func:`multiref.output.hfdata.add_config`) and the ``README.md`` card
beside it; or a folder that does not exist or is empty. A remote prefix is ours when it has
no object, a ``dataset_meta.json`` or the ``_MANIFEST.json`` of a remote publish, or a complete
staging sidecar (a publish that a crash cut short, which the next run finishes). Anything else is refused with a :class:`NotOurFolder`
naming the folder and its first entries, before anything is touched. So is an output that
is, or contains, one of the command's inputs.
"""

from __future__ import annotations

import errno
import glob
import json
import os
import re
from typing import Iterable, Sequence

from multiref.util.errors import UserError
from multiref.util.location import is_remote

META_FILE = "dataset_meta.json"  # multiref.output.hfdata.META_FILE (not imported: hfdata needs pyarrow)
CARD_FILE = "README.md"
MANIFEST = "_MANIFEST.json"  # multiref.output.publish_remote.MANIFEST: what a remote publish writes
SHOWN = 4  # entries named in the message

#: errors that say the output's filesystem cannot take the build, wherever they come from
FULL_OR_READ_ONLY = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS)
#: further errors that are the output's when they name a file under it
ON_OUTPUT = FULL_OR_READ_ONLY + (errno.EACCES, errno.EPERM, errno.EIO, errno.ENAMETOOLONG, errno.EMFILE)
_ERRNO_IN_TEXT = re.compile(r"\[errno (\d+)\]", re.IGNORECASE)


class NotOurFolder(UserError):
    """The output is a folder this tool did not write, or holds the command's input."""


# ---------------------------------------------------------------- local folders


def is_published(folder: str) -> bool:
    """True when ``folder`` holds a dataset this tool published (module docstring)."""
    if not os.path.isfile(os.path.join(folder, CARD_FILE)):
        return False
    try:
        with open(os.path.join(folder, META_FILE), encoding="utf-8") as fh:
            meta = json.load(fh)
    except (OSError, ValueError):
        return False
    return isinstance(meta, dict) and isinstance(meta.get("configs"), dict)


def describe(entries: Sequence[str]) -> str:
    """``"3 entries: NOTES.txt, RC_2017-01.zst, notes/"``: the count and the first few, sorted."""
    entries = sorted(entries)
    shown = ", ".join(entries[:SHOWN]) + (", ..." if len(entries) > SHOWN else "")
    return f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}: {shown}"


def _entries(folder: str) -> list:
    return [name + ("/" if os.path.isdir(os.path.join(folder, name)) else "") for name in os.listdir(folder)]


def check_local(target: str, inputs: Iterable[str] = ()) -> None:
    """Raise :class:`NotOurFolder` unless the local folder ``target`` may be replaced: it is
    absent, empty or published by this tool, and is none of ``inputs`` (paths or globs; remote
    ones are skipped) and holds none of them. ``target`` should be resolved (``realpath``)."""
    target = os.path.realpath(target)
    for given, path in _local_inputs(inputs):
        if path == target or path.startswith(target.rstrip(os.sep) + os.sep):
            how = "is" if path == target else "contains"
            raise NotOurFolder(f"refusing to replace {target}: it {how} the input {given}; nothing was written "
                               "(choose an output folder outside the inputs)")
    if not os.path.isdir(target):
        return
    entries = _entries(target)
    if entries and not is_published(target):
        raise NotOurFolder(f"refusing to replace {target}: it is not a dataset folder written by multiref (no "
                           f"{META_FILE} and {CARD_FILE}) and holds {describe(entries)}; nothing was touched "
                           "(choose a new or empty folder, or move those files away yourself)")


def _local_inputs(inputs: Iterable[str]) -> list:
    """``(as given, resolved path)`` for every local input and every file its glob matches."""
    out = []
    for given in inputs:
        if not given or is_remote(given):
            continue
        given = os.fspath(given)
        paths = glob.glob(given) if glob.has_magic(given) else [given]
        out += [(given, os.path.realpath(p)) for p in paths]
    return out


# ---------------------------------------------------------------- remote prefixes


def check_remote_inputs(target: str, inputs: Iterable[str]) -> None:
    """:class:`NotOurFolder` when the object-store prefix ``target`` is or holds one of the
    remote ``inputs`` (paths or globs, compared up to their first wildcard). No request is made."""
    target = target.rstrip("/")
    for given in inputs:
        if given and is_remote(given):
            fixed = re.split(r"[*?\[]", given, maxsplit=1)[0].rstrip("/")
            if fixed == target or fixed.startswith(target + "/"):
                raise NotOurFolder(f"refusing to replace {target}: it {'is' if fixed == target else 'contains'} "
                                   f"the input {given}; nothing was written (choose an output outside the inputs)")


def check_remote(target: str, files: Iterable[str], staging_complete: bool) -> None:
    """:func:`check_local` for an object-store prefix: ``files`` are the relative paths of the
    objects under ``target``; ``staging_complete`` says a cut publish waits in its staging."""
    target = target.rstrip("/")
    files = sorted(files)
    if not files or staging_complete or META_FILE in files or MANIFEST in files:
        return
    top = sorted({f.split("/", 1)[0] + ("/" if "/" in f else "") for f in files})
    raise NotOurFolder(f"refusing to replace {target}: it is not a dataset written by multiref (no {META_FILE} "
                       f"or {MANIFEST}) "
                       f"and holds {len(files)} object(s) under {describe(top)}; nothing was touched "
                       "(choose a new prefix, or delete those objects yourself)")


# ---------------------------------------------------------------- OS errors on the output


def output_error(exc: BaseException, target: str, folders: Sequence[str]) -> UserError | None:
    """A one-line UserError for an OS error on the output met while building ``target``
    (``folders``: the target and its staging folder), or None when ``exc`` is something else.

    Looks through the chain of causes and through the text of wrappers (Beam re-raises a
    worker's ``OSError`` as a ``RuntimeError`` whose message holds ``[Errno 28] ...``).
    A full, over-quota or read-only filesystem counts wherever it shows; permission and I/O
    errors only when they name a file under ``folders`` (an input's are the CLI's to report).
    """
    roots = [os.path.realpath(f).rstrip(os.sep) + os.sep for f in folders]
    seen = exc
    while seen is not None:
        code, filename = _errno_of(seen)
        on_output = filename is not None and any((os.path.realpath(filename) + os.sep).startswith(r) for r in roots)
        if code in FULL_OR_READ_ONLY or (code in ON_OUTPUT and on_output):
            return UserError(f"cannot write the output {target}: {os.strerror(code)} "
                             f"({errno.errorcode.get(code, code)}); nothing was published, the previous "
                             f"content of {target} is unchanged and the partial build was removed")
        seen = seen.__cause__ or seen.__context__
    return None


def _errno_of(exc: BaseException) -> tuple:
    """``(errno or None, filename or None)`` of an OSError, or of ``[Errno N]`` in a message."""
    if isinstance(exc, OSError) and exc.errno:
        return exc.errno, exc.filename
    found = _ERRNO_IN_TEXT.search(str(exc))
    if found:
        return int(found.group(1)), getattr(exc, "filename", None)
    return None, None
