"""Unit tests of multiref.output.publish (atomic publish, lock, signals, what is published), of the
annotation carry-over and of the small-corpus sampling cap. Real subprocess builds:
tests/test_data_safety.py."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys

import pytest

from multiref.output import publish, published
from tests.helpers import file_digests
from multiref.util.errors import UserError


tree = file_digests  # {relative path: sha256} of every file under a folder


def make(folder, files: dict) -> None:
    for rel, text in files.items():
        path = os.path.join(folder, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as fh:
            fh.write(text)


def sidecars(parent) -> list:
    return sorted(n for n in os.listdir(parent) if n.startswith("."))


# what every dataset this tool published holds (multiref.output.publish_target): a folder without it is refused
CARD = {"README.md": "# data\n", "dataset_meta.json": '{"configs": {}}\n'}


# ---------------------------------------------------------------- swap and repair


def test_exchange_swaps_two_folders_atomically(tmp_path):
    make(tmp_path / "a", {"f": "a"})
    make(tmp_path / "b", {"f": "b"})
    assert publish.exchange(str(tmp_path / "a"), str(tmp_path / "b"))  # renameat2 works on this filesystem
    assert (tmp_path / "a" / "f").read_text() == "b" and (tmp_path / "b" / "f").read_text() == "a"


@pytest.mark.parametrize("use_exchange", [True, False])
def test_publishing_swaps_in_the_new_dataset_and_cleans_up(tmp_path, use_exchange):
    target = tmp_path / "data"
    make(target, {"old.txt": "old", "sub/x": "1", **CARD})
    with publish.publishing(str(target), command="test", use_exchange=use_exchange) as pub:
        assert pub.staging == str(tmp_path / ".data.staging") and pub.previous == str(target)
        assert {k: v for k, v in tree(target).items() if k not in CARD} == {
            "old.txt": hashlib.sha256(b"old").hexdigest(), "sub/x": hashlib.sha256(b"1").hexdigest()}
        make(pub.staging, {"new.txt": "new"})
    assert sorted(tree(target)) == ["new.txt"]
    assert sidecars(tmp_path) == []  # no staging, old, ready or lock file left


def test_failed_build_leaves_target_and_next_run_reuses_its_cache(tmp_path, capsys):
    target = tmp_path / "data"
    make(target, {"f": "old", "artifacts/cache-1/model": "old model", **CARD})
    before = tree(target)
    with pytest.raises(RuntimeError):
        with publish.publishing(str(target), command="test") as pub:
            make(pub.staging, {"f": "half", "artifacts/cache-2/model": "trained"})
            raise RuntimeError("boom")
    assert tree(target) == before
    assert sidecars(tmp_path) == [".data.staging"]  # kept for the next run
    with publish.publishing(str(target), command="test") as pub:
        assert "its cache is reused" in capsys.readouterr().err
        assert pub.bring(["artifacts/cache-?"]) == ["artifacts/cache-1", "artifacts/cache-2"]
        assert not os.path.exists(os.path.join(pub.staging, "f"))  # the rest of the partial build is gone
    assert tree(target)["artifacts/cache-2/model"] == hashlib.sha256(b"trained").hexdigest()
    assert tree(target)["artifacts/cache-1/model"] == hashlib.sha256(b"old model").hexdigest()
    assert sidecars(tmp_path) == []


def test_repair_finishes_or_undoes_a_half_done_fallback_swap(tmp_path):
    target = str(tmp_path / "data")
    # cut after `rename(target, old)`, with the staging folder marked complete: finish the swap
    make(tmp_path / ".data.old", {"f": "old"})
    make(tmp_path / ".data.staging", {"f": "new"})
    (tmp_path / ".data.ready").write_text("")
    assert "finished publishing" in publish.repair(target)[0]
    assert (tmp_path / "data" / "f").read_text() == "new" and sidecars(tmp_path) == []
    # target missing, no complete staging: the old dataset comes back
    os.rename(target, str(tmp_path / ".data.old"))
    assert "restored" in publish.repair(target)[0]
    assert (tmp_path / "data" / "f").read_text() == "new" and sidecars(tmp_path) == []


def test_seeded_staging_never_changes_the_target_through_a_hard_link(tmp_path):
    target = tmp_path / "data"
    make(target, {"meta.json": "{}", "cfg/a.parquet": "rows", "cache/big": "x" * 1000, **CARD})
    before = tree(target)
    with pytest.raises(RuntimeError):
        with publish.publishing(str(target), command="test", seed=True, copy=["meta.json"]) as pub:
            staged = os.path.join(pub.staging, "cache", "big")
            assert os.stat(staged).st_ino == os.stat(target / "cache" / "big").st_ino  # linked, not copied
            assert os.stat(os.path.join(pub.staging, "meta.json")).st_ino != os.stat(target / "meta.json").st_ino
            with open(os.path.join(pub.staging, "meta.json"), "w") as fh:  # rewritten in place: a copy
                fh.write('{"changed": 1}')
            os.remove(os.path.join(pub.staging, "cfg", "a.parquet"))  # replaced: safe with a link
            make(pub.staging, {"cfg/a.parquet": "new rows"})
            raise RuntimeError("stop before publishing")
    assert tree(target) == before


def test_abandon_publishes_nothing(tmp_path):
    target = tmp_path / "data"
    make(target, {"f": "old", **CARD})
    with publish.publishing(str(target), command="test") as pub:
        make(pub.staging, {"f": "new"})
        pub.abandon()
    assert (target / "f").read_text() == "old" and sidecars(tmp_path) == []


def test_mistake_before_anything_is_written_leaves_no_staging_folder(tmp_path, capsys):
    target = tmp_path / "data"
    make(target, {"f": "old", **CARD})
    before = tree(target)
    with pytest.raises(UserError, match="bad flag"):
        with publish.publishing(str(target), command="test"):
            raise UserError("bad flag")  # an option checked once the build has started
    assert tree(target) == before and sidecars(tmp_path) == []
    with publish.publishing(str(target), command="test") as pub:
        make(pub.staging, {"f": "new"})
    assert "partial output" not in capsys.readouterr().err  # nothing to reuse, nothing said


def test_output_that_is_a_file_is_a_user_error(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(UserError, match="not a folder"):
        with publish.publishing(str(tmp_path / "f"), command="test"):
            pass


# ---------------------------------------------------------------- lock


def test_second_build_fails_at_once_naming_the_running_one(tmp_path):
    target = str(tmp_path / "data")
    with publish.publishing(target, command="multiref lsdscc build"):
        code = ("import sys; from multiref.output import publish\n"
                "try:\n    publish.Lock(sys.argv[1], 'second').acquire()\n"
                "except publish.FolderLocked as e:\n    print(e); sys.exit(3)\n")
        out = subprocess.run([sys.executable, "-c", code, target], capture_output=True, text=True, timeout=60)
        assert out.returncode == 3, out.stderr
        message = out.stdout.strip()
        assert message.startswith(f"{target} is being written by another build: pid {os.getpid()} on ")
        assert "started 20" in message and "(multiref lsdscc build)" in message and "\n" not in message
    assert sidecars(tmp_path) == []


def test_stale_lock_is_taken_over_with_a_warning(tmp_path, capsys):
    target = str(tmp_path / "data")
    # a build killed with SIGKILL: its lock file says who it was, but no process holds the flock
    (tmp_path / ".data.lock").write_text(json.dumps({"pid": 999999, "host": "h", "started": "2026-01-01T00:00:00Z"}))
    with publish.publishing(target, command="test") as pub:
        make(pub.staging, {"f": "new"})
    err = capsys.readouterr().err
    assert "took over the stale lock" in err and "pid 999999 on h started 2026-01-01T00:00:00Z is gone" in err
    assert (tmp_path / "data" / "f").read_text() == "new"


# ---------------------------------------------------------------- signals


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_inside_a_build_leaves_the_target(tmp_path, sig):
    target = tmp_path / "data"
    make(target, {"f": "old", **CARD})
    with pytest.raises(publish.Interrupted, match=f"interrupted by {sig.name}: .*data is unchanged"):
        with publish.publishing(str(target), command="test") as pub:
            make(pub.staging, {"f": "new"})
            os.kill(os.getpid(), sig)
    assert (target / "f").read_text() == "old"
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handlers restored


# ---------------------------------------------------------------- what is published


def _dataset(folder, splits: dict):
    """A dataset folder with config ``c`` whose splits hold the given numbers of rows."""
    import pyarrow as pa

    from multiref.output import hfdata

    schema = pa.schema([("id", pa.string())])
    for split, n in splits.items():
        hfdata.write_parquet(hfdata.shard_path(str(folder), "c", split), [{"id": str(i)} for i in range(n)], schema)
    hfdata.add_config(str(folder), hfdata.ConfigInfo(name="c", description="d", splits={"train": 99, **{
        s: n for s, n in splits.items() if s != "train"}}, features=schema))


def test_check_dataset_counts_files_and_keeps_every_split_loadable(tmp_path, capsys):
    import datasets
    import pyarrow.parquet as pq

    from multiref.output import hfdata

    import pyarrow as pa

    _dataset(tmp_path, {"train": 3, "validation": 0})
    # A folder written before the writer left empty tables without a row group: pyarrow's
    # write_table gives an empty table one row group of no rows, which datasets rejects.
    empty = tmp_path / "c" / "validation-00000-of-00001.parquet"
    pq.write_table(pa.table({"id": pa.array([], pa.string())}), empty)
    assert pq.ParquetFile(empty).metadata.num_row_groups == 1
    assert published.check_dataset(str(tmp_path)) == {"c": {"train": 3}}
    assert "c validation has no rows; it is left out of the card" in capsys.readouterr().err
    meta = hfdata.load_meta(str(tmp_path))
    assert meta["configs"]["c"]["splits"] == {"train": 3}  # the card said 99
    assert pq.ParquetFile(tmp_path / "c" / "validation-00000-of-00001.parquet").metadata.num_row_groups == 0
    loaded = datasets.load_dataset(str(tmp_path), "c", cache_dir=str(tmp_path / "hf"))
    assert {s: d.num_rows for s, d in loaded.items()} == {"train": 3}


def test_check_dataset_refuses_an_unusable_dataset(tmp_path):
    _dataset(tmp_path / "a", {"train": 0, "validation": 2})
    with pytest.raises(UserError, match="no usable dataset: c train has no rows"):
        published.check_dataset(str(tmp_path / "a"), required=[("c", "train")])
    _dataset(tmp_path / "b", {"train": 0})
    with pytest.raises(UserError, match="no usable dataset: no config has any rows"):
        published.check_dataset(str(tmp_path / "b"))


# ---------------------------------------------------------------- annotations across rebuilds


def _annotated(folder, candidates: str):
    import pyarrow as pa

    from multiref.output import hfdata

    for config, text in (("test_candidates", candidates), ("test_grouped", "groups")):
        schema = pa.schema([("id", pa.string())])
        hfdata.write_parquet(hfdata.shard_path(str(folder), config, "test"), [{"id": text}], schema)
        hfdata.add_config(str(folder), hfdata.ConfigInfo(name=config, description=config, splits={"test": 1},
                                                         features=schema))
    make(folder, {"annotations/alice.csv": "row_id,relevant,group\n"})


def test_annotations_kept_when_the_test_set_is_unchanged(tmp_path):
    from multiref.output import hfdata

    from lsdscc.annotation.roundtrip import carry_over

    _annotated(tmp_path / "old", "same")
    _annotated(tmp_path / "new", "same")
    for item in ("test_grouped", "annotations"):
        publish._remove(str(tmp_path / "new" / item))
    meta = hfdata.load_meta(str(tmp_path / "new"))
    del meta["configs"]["test_grouped"]
    published.write_meta(str(tmp_path / "new"), meta)
    note = carry_over(str(tmp_path / "old"), str(tmp_path / "new"), str(tmp_path / "data"))
    assert note.startswith("kept the annotations")
    new, old = tree(tmp_path / "new"), tree(tmp_path / "old")
    assert new.pop("README.md") and old.pop("README.md")  # the card's title is the folder's name here
    assert new == old


def test_annotations_moved_aside_when_the_test_set_changed(tmp_path):
    import datasets

    from multiref.output import hfdata

    from lsdscc.annotation.roundtrip import carry_over

    _annotated(tmp_path / "old", "before")
    _annotated(tmp_path / "new", "after")  # a seeded staging folder still holds the old annotations
    old = tree(tmp_path / "old")
    note = carry_over(str(tmp_path / "old"), str(tmp_path / "new"), str(tmp_path / "data"))
    aside = note.rsplit(" ", 1)[1]
    assert note.startswith("the test set changed") and os.path.basename(aside).startswith("data.annotations-20")
    assert "test_grouped" not in hfdata.load_meta(str(tmp_path / "new"))["configs"]
    assert not (tmp_path / "new" / "test_grouped").exists() and not (tmp_path / "new" / "annotations").exists()
    assert tree(tmp_path / "old") == old
    kept = tree(aside)
    assert {k: v for k, v in kept.items() if k.startswith(("test_", "annotations"))} == \
        {k: v for k, v in old.items() if k.startswith(("test_", "annotations"))}
    grouped = datasets.load_dataset(aside, "test_grouped", cache_dir=str(tmp_path / "hf"))["test"]
    assert grouped["id"] == ["groups"]


# ---------------------------------------------------------------- small corpora


def _queries(sizes: dict):
    """Queries whose response numbers fall in the strata: {response number: how many queries}."""
    from lsdscc.testset.assemble import Query

    out = {}
    for n_responses, count in sizes.items():
        for i in range(count):
            qid = f"q{n_responses}-{i}"
            out[qid] = Query(qid, f"text {qid}", [(f"{qid}-p{k}", f"r{k}") for k in range(n_responses)])
    return out


@pytest.mark.parametrize("sizes, per_stratum, expected", [
    ({1: 1000, 4: 1000, 9: 1000}, 100, {"lt3": 100, "3to5": 100, "gt5": 100}),  # big corpus: the paper's 100
    ({1: 13, 4: 5, 9: 3}, 100, {"lt3": 6, "3to5": 2, "gt5": 1}),  # at most half of each stratum
    ({1: 13, 4: 5, 9: 3}, 2, {"lt3": 2, "3to5": 2, "gt5": 1}),
    ({1: 1, 4: 1, 9: 1}, 100, {"lt3": 0, "3to5": 0, "gt5": 0}),
])
def test_stratum_limits_never_take_a_whole_stratum(sizes, per_stratum, expected):
    from lsdscc.testset.assemble import SamplingConfig, sample_queries, stratum_limits

    config = SamplingConfig(per_stratum=per_stratum)
    queries = _queries(sizes)
    limits = stratum_limits(queries, config)
    assert limits == expected
    assert {k: len(v) for k, v in sample_queries(queries, config, limits).items()} == expected
    assert config.options()["max_stratum_share"] == 0.5


def test_max_stratum_share_must_leave_training_rows():
    from lsdscc.testset.assemble import SamplingConfig

    for bad in (0, 1, 1.5):
        with pytest.raises(UserError, match="--max-stratum-share"):
            SamplingConfig(max_share=bad)


# ---------------------------------------------------------------- remote folders (run on local paths)


def test_remote_protocol_publishes_with_a_marker_written_last(tmp_path):
    """The gs:// protocol through Beam's FileSystems, on a local path (what GCS itself does is untested)."""
    from multiref.output import publish_remote as remote

    target = str(tmp_path / "data")
    make(tmp_path / "data", {"old.parquet": "old", remote.SUCCESS: "", remote.MANIFEST: "{}"})  # an earlier publish
    with pytest.raises(RuntimeError):
        with remote.publishing_remote(target, command="test") as pub:
            make(pub.staging, {"a/new.parquet": "new"})
            raise RuntimeError("failed build")
    assert sorted(remote.list_files(target)) == ["_MANIFEST.json", "_SUCCESS", "old.parquet"]
    with remote.publishing_remote(target, command="test") as pub:
        assert remote.list_files(pub.staging) == {}  # the failed build's output was removed
        make(pub.staging, {"a/new.parquet": "new", "card.md": "card"})
    assert sorted(remote.list_files(target)) == ["_MANIFEST.json", "_SUCCESS", "a/new.parquet", "card.md"]
    manifest = json.loads((tmp_path / "data" / "_MANIFEST.json").read_text())
    assert manifest == {"files": [{"path": "a/new.parquet", "size": 3}, {"path": "card.md", "size": 4}]}
    assert remote.list_files(str(tmp_path / ".data.staging")) == {} and remote.is_complete(target)


def test_remote_half_copied_publish_is_finished_by_the_next_run(tmp_path):
    from multiref.output import publish_remote as remote

    target = str(tmp_path / "data")
    make(tmp_path / ".data.staging", {"new.parquet": "new"})
    remote.write_manifest(str(tmp_path / ".data.staging"))
    make(tmp_path / "data", {"old.parquet": "old"})  # a crash after _SUCCESS was deleted, mid-copy
    with remote.publishing_remote(target, command="test") as pub:
        pub.abandon()
    assert sorted(remote.list_files(target)) == ["_MANIFEST.json", "_SUCCESS", "new.parquet"]


def test_remote_lock_of_another_host_stops_the_build(tmp_path):
    from multiref.output import publish_remote as remote

    (tmp_path / ".data.lock").write_text(json.dumps({"pid": 1, "host": "elsewhere", "started": "2026-01-01T00:00:00Z"}))
    with pytest.raises(publish.FolderLocked, match=r"pid 1 on elsewhere, started 2026-01-01T00:00:00Z .*delete .*\.data\.lock"):
        with remote.publishing_remote(str(tmp_path / "data"), command="test"):
            pass


def test_the_annotator_agreement_section_follows_the_annotations(tmp_path):
    from multiref.output import hfdata

    from lsdscc.annotation.roundtrip import AGREEMENT_SECTION, carry_over

    def with_section(folder, candidates):
        _annotated(folder, candidates)
        meta = hfdata.load_meta(str(folder))
        meta.setdefault("sections", {})[AGREEMENT_SECTION] = "Fleiss' kappa of relevance 0.5"
        published.write_meta(str(folder), meta)

    with_section(tmp_path / "old", "same")
    _annotated(tmp_path / "new", "same")  # a fresh build: no section
    assert carry_over(str(tmp_path / "old"), str(tmp_path / "new"), str(tmp_path / "data")).startswith("kept")
    assert hfdata.load_meta(str(tmp_path / "new"))["sections"][AGREEMENT_SECTION] == "Fleiss' kappa of relevance 0.5"
    assert "## Annotator agreement" in (tmp_path / "new" / "README.md").read_text()
    with_section(tmp_path / "before", "before")
    with_section(tmp_path / "after", "after")  # a seeded staging folder still holds the old section
    note = carry_over(str(tmp_path / "before"), str(tmp_path / "after"), str(tmp_path / "data2"))
    assert AGREEMENT_SECTION not in hfdata.load_meta(str(tmp_path / "after")).get("sections", {})
    assert AGREEMENT_SECTION in hfdata.load_meta(note.rsplit(" ", 1)[1])["sections"]
