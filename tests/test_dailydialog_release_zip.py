"""``--dailydialog`` takes the release as downloaded (issue 21 item 7): ``ijcnlp_dailydialog.zip``
with its nested split zips, and the folder it unzips to. The fixture zips are made here from
the bundled sample (dailydialog_pp/sample), in the official layout."""

from __future__ import annotations

import io
import os
import zipfile

import pytest

from dailydialog_pp import readers
from multiref.util.errors import UserError

SAMPLE = os.path.join(os.path.dirname(readers.__file__), "sample")
SPLITS = ("train", "validation", "test")


def _split_zip(split: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name in (f"dialogues_{split}.txt", f"dialogues_act_{split}.txt", f"dialogues_emotion_{split}.txt"):
            z.write(os.path.join(SAMPLE, split, name), f"{split}/{name}")
    return buf.getvalue()


@pytest.fixture(scope="module")
def release(tmp_path_factory):
    """``ijcnlp_dailydialog.zip`` and the folder it unzips to (split zips inside)."""
    root = tmp_path_factory.mktemp("release")
    unzipped = root / "ijcnlp_dailydialog"
    unzipped.mkdir()
    outer = root / "ijcnlp_dailydialog.zip"
    with zipfile.ZipFile(outer, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("ijcnlp_dailydialog/readme.txt", "DailyDialog\n")
        for split in SPLITS:
            data = _split_zip(split)
            z.writestr(f"ijcnlp_dailydialog/{split}.zip", data)
            (unzipped / f"{split}.zip").write_bytes(data)
    return root, outer, unzipped


def _content(lines):
    return [(r.line, r.text, r.extra) for r in lines]


@pytest.mark.parametrize("which", ["outer zip", "unzipped folder", "parent of the unzipped folder"])
def test_release_reads_as_the_plain_folder(release, which):
    root, outer, unzipped = release
    path = {"outer zip": outer, "unzipped folder": unzipped, "parent of the unzipped folder": root}[which]
    if which == "parent of the unzipped folder":  # the folder holding ijcnlp_dailydialog/ and the zip
        path = root
    plain = readers.read_dailydialog(SAMPLE)
    zipped = readers.read_dailydialog(str(path))
    assert _content(zipped) == _content(plain) and len(plain) > 0
    assert all("!" in r.path and r.path.endswith(".txt") for r in zipped)
    readers.check_dailydialog_shape(str(path))  # the shape check reads the members too


def test_member_paths_name_the_archives(release):
    _, outer, _ = release
    files = dict(readers.check_dailydialog(str(outer)))
    assert files["train"][0] == f"{outer}!ijcnlp_dailydialog/train.zip!train/dialogues_train.txt"


def test_a_zip_without_split_zips_is_a_user_error(tmp_path):
    bad = tmp_path / "other.zip"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("x.txt", "x")
    with pytest.raises(UserError, match=r"other\.zip: a zip without DailyDialog split zips"):
        readers.check_dailydialog(str(bad))


def test_a_split_zip_missing_a_label_file_is_named(tmp_path):
    folder = tmp_path / "ijcnlp_dailydialog"
    folder.mkdir()
    with zipfile.ZipFile(folder / "train.zip", "w") as z:
        z.write(os.path.join(SAMPLE, "train", "dialogues_train.txt"), "train/dialogues_train.txt")
        z.write(os.path.join(SAMPLE, "train", "dialogues_act_train.txt"), "train/dialogues_act_train.txt")
    with pytest.raises(UserError, match=r"train\.zip!train/dialogues_emotion_train\.txt"):
        readers.check_dailydialog(str(folder))


def test_build_from_the_zip_gives_the_same_rows_as_the_folder(release, tmp_path):
    """The DailyDialog job (real Beam) on the outer zip and on the plain sample folder."""
    from pipelines.dailydialog.job import run

    _, outer, _ = release
    ref = os.path.join(SAMPLE, "multireftest.json")
    out_zip, out_dir = tmp_path / "z", tmp_path / "d"
    run(["--dailydialog", str(outer), "--multiref-references", ref, "--output", str(out_zip)])
    run(["--dailydialog", SAMPLE, "--multiref-references", ref, "--output", str(out_dir)])
    parquet = sorted(os.path.relpath(os.path.join(r, f), out_dir) for r, _, fs in os.walk(out_dir)
                     for f in fs if f.endswith(".parquet"))
    assert parquet
    for rel in parquet:
        assert (out_zip / rel).read_bytes() == (out_dir / rel).read_bytes(), rel


def test_dailydialog_card_passes_the_hub_rules(tmp_path):
    from pipelines.dailydialog.job import run
    from tests.hub_card import check_hub_card

    out = tmp_path / "o"
    run(["--output", str(out)])  # the bundled sample: multiref, dailydialog_pp
    text = (out / "README.md").read_text()
    data = check_hub_card(text)
    assert data["license"] == "cc-by-nc-sa-4.0" and data["source_datasets"] == ["extended|daily_dialog"]
    for key in ("li-etal-2017-dailydialog", "gupta-etal-2019-investigating", "sai-etal-2020-improving"):
        assert key in text
