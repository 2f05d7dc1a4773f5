"""Real releases as downloaded (issue 21 items 1-4, 6): deletions in ``_meta``, digests and
``--verify-hashes``, ``--since`` / ``--until``, months and eras, Hub-ready cards.

Every build reads generated Arctic Shift-style monthly files (tests/era_dumps.py) with the
real Beam pipeline.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from lsdscc.corpus import eras
from lsdscc.corpus.config import CorpusConfig, parse_date
from lsdscc.corpus.deletions import meta_drop_reason
from lsdscc.corpus.outcomes import Dropped
from lsdscc.corpus.records import normalize
from multiref import citations
from pipelines.lsdscc.corpus import run
from tests import era_dumps
from tests.helpers import REPO_DIR
from tests.test_citations import entries
from tests.hub_card import check_hub_card


def _ids(folder) -> set:
    out = set()
    for config in ("single_turn", "multi_turn"):
        for name in sorted(os.listdir(folder / config)):
            table = pq.read_table(folder / config / name)
            if config == "single_turn":
                out.update(table.column("response_id").to_pylist())
                out.update(table.column("query_id").to_pylist())
            else:
                for ids in table.column("comment_ids").to_pylist():
                    out.update(ids)
    return out


@pytest.fixture(scope="module")
def era_build(tmp_path_factory):
    root = tmp_path_factory.mktemp("eras")
    paths = era_dumps.era_dumps(root / "dumps", threads_per_month=2)
    out = root / "out"
    summary = run(["--input", str(root / "dumps"), "--output", str(out), "--validation-fraction", "0"], quiet=True)
    return root, paths, out, summary


# -- item 4: every era's shape is read ---------------------------------------------------------

def test_every_era_shape_is_read_and_kept(era_build):
    _, _, out, summary = era_build
    counts = summary["counts"]
    assert counts["records-read"] == 6 * 2 * 4
    assert not any(k.startswith("rejected-") for k in counts), counts
    assert counts["posts-kept-submissions"] == 12 and counts["posts-kept-comments"] == 36
    kept = _ids(out)
    for year in era_dumps.YEARS:  # every era gives rows
        assert any(i.startswith((f"t1_c{year}06", f"t3_s{year}06")) for i in kept), year


def test_months_and_fields_per_era_in_stats(era_build):
    _, _, out, _ = era_build
    stats = json.loads((out / "stats.json").read_text())
    assert stats["months"] == {f"{y}-06": 8 for y in era_dumps.YEARS}
    fields = stats["fields_by_era"]
    assert set(fields) == {"2005-12..2015-07", "2015-08..2021-01", "2023-04..2023-10", "2023-11.."}
    assert "name" in fields["2005-12..2015-07"] and "name" not in fields["2015-08..2021-01"]
    assert "_meta" in fields["2023-11.."] and "_meta" not in fields["2023-04..2023-10"]
    assert "permalink" in fields["2015-08..2021-01"]  # 2020's shape
    assert len(fields["2023-11.."]) > 70  # the 2026 comment (74 fields) and submission
    # the months between count as 0; a month is flagged only below half of *both* neighbours
    assert stats["low_months"] == []


def test_a_blackout_month_is_flagged(tmp_path):
    months = {"2023-04": 900, "2023-05": 1000, "2023-06": 120, "2023-07": 950, "2023-08": 40}
    flagged = eras.low_months(months)
    assert [m["month"] for m in flagged] == ["2023-06"]  # 2023-08 is the last month: never flagged
    assert flagged[0] == {"month": "2023-06", "records": 120, "previous": 1000, "next": 950}
    assert eras.low_months({"2023-05": 10, "2023-07": 10})[0]["month"] == "2023-06"  # a missing file
    assert eras.low_months({"2023-05": 10, "2023-06": 6, "2023-07": 10}) == []


def test_blackout_flag_reaches_stats_and_card(tmp_path):
    subs, coms = [], []
    for month, n in ((5, 6), (6, 1), (7, 6)):
        for k in range(n):
            s, c = era_dumps.thread(2023, month, k, comments=2)
            subs.append(s)
            coms += c
        era_dumps.write_month(tmp_path / "d", 2023, month, [x for x in subs if x["id"][5:7] == f"{month:02d}"],
                              [x for x in coms if x["id"][5:7] == f"{month:02d}"])
    run(["--input", str(tmp_path / "d"), "--output", str(tmp_path / "o"), "--validation-fraction", "0"], quiet=True)
    stats = json.loads((tmp_path / "o" / "stats.json").read_text())
    assert stats["months"] == {"2023-05": 18, "2023-06": 3, "2023-07": 18}
    assert [m["month"] for m in stats["low_months"]] == ["2023-06"]
    card = (tmp_path / "o" / "README.md").read_text()
    assert "| 2023-06 (flagged) | 3 |" in card and "- 2023-06: 3 records (before 18, after 18)" in card


# -- item 2: digests while reading, --verify-hashes -------------------------------------------

def test_file_digests_sizes_records_and_times_are_recorded(era_build):
    _, paths, out, _ = era_build
    stats = json.loads((out / "stats.json").read_text())
    files = {f["name"]: f for f in stats["files"]}
    assert sorted(files) == sorted(os.path.basename(p) for p in paths)
    for path in paths:
        f = files[os.path.basename(path)]
        with open(path, "rb") as fh:
            data = fh.read()
        assert f["sha256"] == hashlib.sha256(data).hexdigest() and f["bytes"] == len(data)
    rc2008 = files["RC_2008-06.zst"]
    assert rc2008["records"] == 6
    assert rc2008["first_created_utc"] == era_dumps.epoch(2008, 6) + 60
    assert rc2008["last_created_utc"] == era_dumps.epoch(2008, 6) + 180
    meta = json.loads((out / "dataset_meta.json").read_text())
    assert meta["source_files"] == stats["files"]
    card = (out / "README.md").read_text()
    assert f"| RC_2008-06.zst | {rc2008['bytes']:,} B | 6 | 2008-06-10T12:01:00Z | 2008-06-10T12:03:00Z | `{rc2008['sha256']}` |" in card


def test_digest_is_of_the_stored_bytes_on_every_reader_path(tmp_path):
    """Plain, gzip and JSON-array files, with and without the subreddit prefilter."""
    import gzip

    from lsdscc.corpus import provenance, sources

    rows = [json.dumps({"id": f"a{i}", "subreddit": "movies" if i % 2 else "other", "body": "x",
                        "link_id": "t3_q", "parent_id": "t3_q", "created_utc": 5}) for i in range(50)]
    files = {"plain.jsonl": ("\n".join(rows) + "\n").encode(), "packed.jsonl.gz": gzip.compress("\n".join(rows).encode()),
             "array.json": ("[" + ",".join(rows) + "]").encode()}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
        for subs in (None, ("movies",)):
            tally = provenance.FileTally(str(tmp_path / name))
            items = list(sources.read_items(str(tmp_path / name), subreddits=subs, tap=tally.tap))
            assert items and tally.hasher.hexdigest() == hashlib.sha256(data).hexdigest(), name
            assert tally.bytes == len(data)


def _hashes_file(path, paths, wrong: str | None = None):
    lines = []
    for p in paths:
        digest = hashlib.sha256(open(p, "rb").read()).hexdigest()
        if os.path.basename(p) == wrong:
            digest = "0" * 64
        lines.append(f"{digest}  {os.path.basename(p)}\n")
    path.write_text("".join(lines))
    return path


def _cli(*args, timeout=600):
    env = dict(os.environ, PYTHONPATH=str(REPO_DIR))
    return subprocess.run([sys.executable, "-m", "multiref_cli", *args], capture_output=True, text=True,
                          cwd=REPO_DIR, env=env, timeout=timeout)


def test_verify_hashes_mismatch_stops_before_anything_is_published(era_build, tmp_path):
    root, paths, _, _ = era_build
    hashes = _hashes_file(tmp_path / "hashes.txt", paths, wrong="RC_2016-06.zst")
    out = tmp_path / "out"
    proc = _cli("lsdscc", "build", "--input", str(root / "dumps"), "--output", str(out), "--skip-testset",
                "--verify-hashes", str(hashes), "--quiet")
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("multiref: error: ") and "RC_2016-06.zst" in lines[0]
    assert "does not match" in lines[0]
    assert not out.exists()  # nothing published; the staging folder (kept for a look) holds nothing
    staging = [os.path.join(r, f) for n in os.listdir(tmp_path) if n.startswith(".out")
               for r, _, fs in os.walk(tmp_path / n) for f in fs]
    assert staging == []


def test_verify_hashes_names_an_unlisted_file(era_build, tmp_path):
    root, paths, _, _ = era_build
    hashes = _hashes_file(tmp_path / "hashes.txt", [p for p in paths if "RS_2020" not in p])
    from lsdscc.corpus.provenance import check_listed, digest_problem
    from multiref.util.errors import UserError

    with pytest.raises(UserError, match=r"RS_2020-06\.zst: not listed in"):
        check_listed(paths, str(hashes))
    good = _hashes_file(tmp_path / "good.txt", paths)
    listed = check_listed(paths, str(good))
    for p in paths:  # the reader's check: the digest of the bytes it read against the listed one
        digest = hashlib.sha256(open(p, "rb").read()).hexdigest()
        assert digest_problem(p, digest, listed, str(good)) is None
        assert "does not match" in digest_problem(p, "f" * 64, listed, str(good))
    (tmp_path / "bad.txt").write_text("not a hash line\n")
    with pytest.raises(UserError, match=r"bad\.txt:1: expected '<sha256>  <file name>'"):
        check_listed(paths, str(tmp_path / "bad.txt"))


def test_verify_hashes_passing_builds(era_build, tmp_path):
    root, paths, out, _ = era_build
    hashes = _hashes_file(tmp_path / "hashes.txt", paths)
    again = tmp_path / "again"
    run(["--input", str(root / "dumps"), "--output", str(again), "--validation-fraction", "0",
         "--verify-hashes", str(hashes)], quiet=True)
    for config in ("single_turn", "multi_turn"):
        assert (again / config / "train-00000-of-00001.parquet").read_bytes() == \
            (out / config / "train-00000-of-00001.parquet").read_bytes()


# -- item 1: deletions from _meta ---------------------------------------------------------------

def test_meta_drop_reasons():
    assert meta_drop_reason(None) is None and meta_drop_reason("x") is None
    assert meta_drop_reason({"was_deleted_later": False, "removal_type": None}) is None
    assert meta_drop_reason({"removal_type": ""}) is None and meta_drop_reason({"removal_type": 0}) is None
    assert meta_drop_reason({"was_deleted_later": True}) == "deleted-later"
    assert meta_drop_reason({"removal_type": "moderator"}) == "removed-later"
    assert meta_drop_reason({"removal_type": "legal", "was_deleted_later": True}) == "removed-later"
    assert meta_drop_reason({"was_initially_deleted": True}) == "initially-deleted"
    assert meta_drop_reason({"was_deleted_later": True}, keep_later=True) is None
    assert meta_drop_reason({"removal_type": "reddit"}, keep_later=True) is None
    assert meta_drop_reason({"was_initially_deleted": True}, keep_later=True) == "initially-deleted"


def test_deleted_text_is_never_restored_even_when_kept():
    rec = era_dumps.record(2026, "t1", "abc", 1_700_000_000, link="t3_q", parent="t3_q", text="[deleted]",
                           meta={"was_deleted_later": True})
    assert normalize(rec, CorpusConfig(drop_deleted_later=False)).reason == "deleted"  # (with its tombstone)


@pytest.fixture(scope="module")
def deletion_dumps(tmp_path_factory):
    root = tmp_path_factory.mktemp("deleted")
    metas = {0: {}, 1: {"was_deleted_later": True}, 2: {"removal_type": "moderator"}, 3: {"was_initially_deleted": True}}
    subs, coms = [], []
    for n in range(3):
        s, c = era_dumps.thread(2026, 1, n, comments=5, metas=metas)
        subs.append(s)
        coms += c
    era_dumps.write_month(root / "d", 2026, 1, subs, coms)
    return root


def test_deletions_are_dropped_by_default_and_counted_by_reason(deletion_dumps):
    out = deletion_dumps / "default"
    summary = run(["--input", str(deletion_dumps / "d"), "--output", str(out), "--validation-fraction", "0"], quiet=True)
    counts = summary["counts"]
    assert counts["dropped-deleted-later"] == 3 and counts["dropped-removed-later"] == 3
    assert counts["dropped-initially-deleted"] == 3 and counts["posts-kept-comments"] == 6
    kept = _ids(out)
    assert not any(i.endswith(("x1", "x2", "x3")) for i in kept) and any(i.endswith("x0") for i in kept)
    card = (out / "README.md").read_text()
    assert "Deleted after it (`_meta.was_deleted_later`): 3 dropped; removed after it (`_meta.removal_type`): 3 dropped." in card
    assert '"drop_deleted_later": true' in card


def test_keep_deleted_later_keeps_them_and_says_so(deletion_dumps):
    out = deletion_dumps / "kept"
    summary = run(["--input", str(deletion_dumps / "d"), "--output", str(out), "--validation-fraction", "0",
                   "--keep-deleted-later"], quiet=True)
    counts = summary["counts"]
    assert "dropped-deleted-later" not in counts and "dropped-removed-later" not in counts
    assert counts["dropped-initially-deleted"] == 3 and counts["posts-kept-comments"] == 12
    kept = _ids(out)
    assert any(i.endswith("x1") for i in kept) and any(i.endswith("x2") for i in kept)
    assert not any(i.endswith("x3") for i in kept)
    card = (out / "README.md").read_text()
    assert '"drop_deleted_later": false' in card and "**kept**, as asked (`--keep-deleted-later`)" in card


# -- item 3: --since / --until --------------------------------------------------------------------

def test_parse_date():
    assert parse_date("2023-06-01") == 1685577600
    assert parse_date("2023-06-01", end=True) == 1685577600 + 86399
    assert parse_date("1685577600", end=True) == 1685577600
    for bad in ("2023-13-01", "June 2023", "2023-06", "-5"):
        with pytest.raises(ValueError):
            parse_date(bad)


def test_time_range_keeps_whole_threads_by_their_submission(tmp_path):
    subs, coms = [], []
    for day, n in ((1, 0), (15, 1), (30, 2)):
        s, c = era_dumps.thread(2023, 6, n, day=day, comments=3, late_days=5 if n == 1 else 0)
        subs.append(s)
        coms += c
    era_dumps.write_month(tmp_path / "d", 2023, 6, subs, coms)
    out = tmp_path / "o"
    summary = run(["--input", str(tmp_path / "d"), "--output", str(out), "--validation-fraction", "0",
                   "--since", "2023-06-10", "--until", "2023-06-15"], quiet=True)
    kept = _ids(out)
    # thread 1 (15 June) is in range: kept whole, with its reply of 20 June (after --until)
    assert {"t3_s2023061", "t1_c2023061x0", "t1_c2023061x1", "t1_c2023061x2"} <= kept
    assert not any(i.startswith(("t3_s2023060", "t3_s2023062", "t1_c2023060", "t1_c2023062")) for i in kept)
    assert summary["counts"]["dropped-out-of-range"] == 8 and summary["counts"]["threads-out-of-range"] == 2
    options = json.loads((out / "stats.json").read_text())["options"]
    assert options["since"] == 1686355200 and options["until"] == 1686873599
    card = (out / "README.md").read_text()
    assert "Time range: threads whose submission was created from 2023-06-10T00:00:00Z to 2023-06-15T23:59:59Z" in card


def test_time_range_flags_are_checked(tmp_path):
    proc = _cli("lsdscc", "build", "--output", str(tmp_path / "o"), "--skip-testset", "--since", "2023-02-30")
    assert proc.returncode == 1 and proc.stderr.strip().splitlines()[-1].startswith("multiref: error: --since: ")
    proc = _cli("lsdscc", "build", "--output", str(tmp_path / "o"), "--skip-testset",
                "--since", "2023-06-02", "--until", "2023-06-01")
    assert proc.returncode == 1 and "since (1685664000) is after until" in proc.stderr


# -- item 6: the card is ready for the Hub ------------------------------------------------------

def test_lsdscc_card_passes_the_hub_rules(era_build):
    _, _, out, _ = era_build
    text = (out / "README.md").read_text()
    data = check_hub_card(text)
    assert data["license"] == "other" and data["license_name"] == "reddit-user-agreement"
    assert data["size_categories"] == ["n<1K"]
    assert "@inproceedings{xu-etal-2018-lsdscc" in text and "## Terms of use" in text
    assert entries(text) == [citations.XU_2018]  # BibTeX once: from multiref.citations


def test_lsdscc_card_fails_the_rules_without_its_fields(era_build):
    """The check is real: the card as main wrote it (configs only) fails it."""
    _, _, out, _ = era_build
    text = (out / "README.md").read_text()
    stripped = "\n".join(line for line in text.splitlines() if not line.startswith(("license", "language", "- en")))
    with pytest.raises((AssertionError, KeyError)):
        check_hub_card(stripped)


def _plain_tally(records):
    """The tally as computed before it remembered key sets and days: every record's fields."""
    from lsdscc.corpus import eras

    months, fields = {}, {}
    for record, created in records:
        if created is None:
            continue
        try:
            month = eras.month_of(created)
        except (OverflowError, OSError, ValueError):
            continue
        months[month] = months.get(month, 0) + 1
        fields.setdefault(eras.era_of(month), set()).update(
            k if eras._FIELD_NAME.match(k) else eras.OTHER_FIELD for k in record)
    return months, {era: sorted(f) for era, f in fields.items()}


def test_the_schema_tally_remembers_key_sets_and_days_without_changing_the_tally(monkeypatch):
    import random

    from lsdscc.corpus import eras

    monkeypatch.setattr(eras.SchemaTally, "SEEN_LIMIT", 7)  # the bound is passed many times
    rng = random.Random(5)
    keys = ["id", "body", "author", "score", "name", "_meta", "bad key!", "permalink", "edited"]
    times = [0, 86399, 86400, 1_117_584_000, 1_420_070_399, 1_420_070_400, 1_700_000_000.5, -86401,
             10**20, float("nan"), None]
    records = [({k: 1 for k in rng.sample(keys, rng.randrange(1, len(keys)))}, rng.choice(times))
               for _ in range(3000)]
    records += [({f"k{i}": 1}, 1_559_347_200 + 86400 * i) for i in range(50)]  # ever-new key sets and days
    tally = eras.SchemaTally()
    for record, created in records:
        tally.add(record, created)
    assert tally.as_data() == _plain_tally(records)
    assert len(tally._seen) <= 7 and len(tally._days) <= 7


def test_record_created_is_none_for_an_unreadable_time():
    # It used to raise TypeError here (its except clause named an outcome type, not the
    # exception the record reader raises).
    from lsdscc.corpus import eras

    for record in ({}, {"created_utc": "soon"}, {"created_utc": True}, {"created_utc": 10**20},
                   {"created_utc": float("nan")}, {"created_utc": [1]}, {"kind": "t1", "data": {"created": -5}}):
        assert eras.record_created(record) is None, record
    assert eras.record_created({"created_utc": "1559347200.5"}) == 1_559_347_200
    assert eras.record_created({"kind": "t3", "data": {"created": 7}}) == 7
