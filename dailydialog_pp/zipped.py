"""DailyDialog as downloaded: ``ijcnlp_dailydialog.zip`` and its nested split zips.

The official release is one zip holding ``ijcnlp_dailydialog/{train,validation,test}.zip``
(plus the unsplit ``dialogues_*.txt``); each split zip holds ``<split>/dialogues_<split>.txt``,
``<split>/dialogues_act_<split>.txt`` and ``<split>/dialogues_emotion_<split>.txt``. Users
pass the outer zip, or the folder they unzipped it into (the split zips still zipped), or a
folder of unzipped split folders (read by :mod:`dailydialog_pp.readers` directly).

Files inside zips are named by *member paths*: ``OUTER.zip!ijcnlp_dailydialog/train.zip!train/
dialogues_train.txt`` (``!`` separates an archive from a member; a folder's split zip is
``FOLDER/train.zip!train/dialogues_train.txt``; :func:`split_path` finds the file on disk, so a
folder name may hold ``!``). Nothing is extracted to disk: members are read in memory (the
largest split file is about 6 MB), each checked against :data:`MAX_MEMBER_BYTES` by its
declared size and by what it inflates to, so a zip bomb is one line, not a MemoryError.
"""

from __future__ import annotations

import io
import os
import zipfile
import zlib

from multiref.util.errors import UserError

SEP = "!"
_KINDS = ("dialogues_{split}.txt", "dialogues_act_{split}.txt", "dialogues_emotion_{split}.txt")


#: The largest member read from a release zip: DailyDialog's largest file is about 6 MB and
#: a split zip about 3 MB, so a member declaring or inflating to more is not the release (a
#: zip bomb) and is refused with one line, before and while it is read.
MAX_MEMBER_BYTES = 64 << 20


def split_path(path: str) -> list:
    """``path`` as ``[file on disk, member, member inside that member, ...]``: the file is the
    shortest prefix ending before a ``!`` that is a file (so a folder whose name holds ``!``
    works); a path that is a file itself, or has no ``!`` after a file, is ``[path]``."""
    if SEP not in path or os.path.exists(path):
        return [path]
    at = path.find(SEP)
    while at >= 0:
        if os.path.isfile(path[:at]):
            return [path[:at]] + path[at + 1:].split(SEP)
        at = path.find(SEP, at + 1)
    return [path]


def _member(archive: zipfile.ZipFile, name: str, where: str) -> bytes:
    """Member ``name``'s bytes, at most :data:`MAX_MEMBER_BYTES` by its declared size and by
    what it inflates to (read in 1 MiB steps); UserError naming ``where`` otherwise."""
    info = archive.getinfo(name)
    too_big = (f"{where}: the zip member {name} {{}} {MAX_MEMBER_BYTES:,} bytes, more than any file of the "
               "DailyDialog release; not read (a damaged or hostile zip)")
    if info.file_size > MAX_MEMBER_BYTES:
        raise UserError(too_big.format(f"declares {info.file_size:,} bytes, over"))
    parts, size = [], 0
    with archive.open(info) as fh:
        while block := fh.read(1 << 20):
            size += len(block)
            if size > MAX_MEMBER_BYTES:
                raise UserError(too_big.format("inflates past"))
            parts.append(block)
    return b"".join(parts)


def open_binary(path: str):
    """A binary file object of a plain file or a member path (nested zips read in memory,
    each member bounded by :data:`MAX_MEMBER_BYTES`)."""
    parts = split_path(path)
    if len(parts) == 1:
        return open(path, "rb")
    data = None
    try:
        with open(parts[0], "rb") as fh:
            data = fh.read(MAX_MEMBER_BYTES + 1)
        if len(data) > MAX_MEMBER_BYTES:
            raise UserError(f"{parts[0]}: over {MAX_MEMBER_BYTES:,} bytes, larger than the DailyDialog release zip")
        for member in parts[1:]:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                data = _member(archive, member, path)
    except (OSError, zipfile.BadZipFile, zlib.error, KeyError, EOFError, NotImplementedError, RuntimeError) as exc:
        raise UserError(f"{path}: cannot read from the zip ({exc})") from None
    return io.BytesIO(data)


def _split_zips(folder: str) -> dict:
    """``{split: path of <split>.zip}`` in ``folder`` or its ``ijcnlp_dailydialog/``."""
    for base in (folder, os.path.join(folder, "ijcnlp_dailydialog")):
        found = {s: os.path.join(base, f"{s}.zip") for s in ("train", "validation", "test")
                 if os.path.isfile(os.path.join(base, f"{s}.zip"))}
        if found:
            return found
    return {}


def _outer_split_zips(path: str) -> dict:
    """``{split: member path of <split>.zip}`` inside the outer release zip ``path``."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except zipfile.BadZipFile as exc:
        raise UserError(f"{path}: not a readable zip ({exc})") from None
    found = {}
    for name in sorted(names):
        base = name.rsplit("/", 1)[-1]
        split = base[:-4] if base.endswith(".zip") else None
        if split in ("train", "validation", "test") and split not in found:
            found[split] = f"{path}{SEP}{name}"
    return found


def _split_files(zip_path: str, split: str) -> tuple | None:
    """Member paths of ``split``'s (text, act, emotion) files in a split zip, or None."""
    handle = open_binary(zip_path)
    try:
        with zipfile.ZipFile(handle) as archive:
            names = set(archive.namelist())
    except zipfile.BadZipFile as exc:
        raise UserError(f"{zip_path}: not a readable zip ({exc})") from None
    for prefix in (f"{split}/", ""):
        wanted = [prefix + k.format(split=split) for k in _KINDS]
        if wanted[0] in names:
            for member in wanted[1:]:
                if member not in names:
                    raise UserError(f"DailyDialog label file not found: {zip_path}{SEP}{member}")
            return tuple(f"{zip_path}{SEP}{m}" for m in wanted)
    return None


def release_splits(path: str, splits) -> list | None:
    """``[(split, (text, act, emotion member paths))]`` when ``path`` is the release zip or a
    folder holding the split zips; None when it is neither (a folder of plain files)."""
    if os.path.isfile(path) and zipfile.is_zipfile(path):
        zips = _outer_split_zips(path)
        if not zips:
            raise UserError(f"{path}: a zip without DailyDialog split zips (expected "
                            "ijcnlp_dailydialog/train.zip, validation.zip, test.zip inside)")
    elif os.path.isdir(path):
        zips = _split_zips(path)
        if not zips:
            return None
    else:
        return None
    out = []
    for split in splits:
        if split in zips:
            files = _split_files(zips[split], split)
            if files is None:
                raise UserError(f"{zips[split]}: no {split}/dialogues_{split}.txt inside")
            out.append((split, files))
    return out
