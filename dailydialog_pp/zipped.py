"""DailyDialog as downloaded: ``ijcnlp_dailydialog.zip`` and its nested split zips.

The official release is one zip holding ``ijcnlp_dailydialog/{train,validation,test}.zip``
(plus the unsplit ``dialogues_*.txt``); each split zip holds ``<split>/dialogues_<split>.txt``,
``<split>/dialogues_act_<split>.txt`` and ``<split>/dialogues_emotion_<split>.txt``. Users
pass the outer zip, or the folder they unzipped it into (the split zips still zipped), or a
folder of unzipped split folders (read by :mod:`dailydialog_pp.readers` directly).

Files inside zips are named by *member paths*: ``OUTER.zip!ijcnlp_dailydialog/train.zip!train/
dialogues_train.txt`` (``!`` separates an archive from a member; a folder's split zip is
``FOLDER/train.zip!train/dialogues_train.txt``). Nothing is extracted to disk: members are read
in memory (the largest split file is about 6 MB).
"""

from __future__ import annotations

import io
import os
import zipfile

from multiref.util.errors import UserError

SEP = "!"
_KINDS = ("dialogues_{split}.txt", "dialogues_act_{split}.txt", "dialogues_emotion_{split}.txt")


def open_binary(path: str):
    """A binary file object of a plain file or a member path (nested zips read in memory)."""
    if SEP not in path:
        return open(path, "rb")
    parts = path.split(SEP)
    data = None
    try:
        with open(parts[0], "rb") as fh:
            data = fh.read()
        for member in parts[1:]:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                data = archive.read(member)
    except (OSError, zipfile.BadZipFile, KeyError) as exc:
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
