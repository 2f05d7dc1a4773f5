"""Parquet mirrors as input (issue 34): shards laid out as the Hugging Face dataset
open-index/arctic (data/comments/YYYY/MM/000.parquet, data/submissions/...) build the same
dataset bytes as the same records given as RC_/RS_ JSON lines (lsdscc.corpus.parquet_source)."""

import copy
import hashlib
import json

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard

from lsdscc.corpus import parquet_source, sources
from lsdscc.corpus.sample_gen import generate, write_arctic
from pipelines.lsdscc.corpus import run


def _records():
    """60 generated threads (2 of another subreddit, every era's schema variant, deleted and bot
    comments) plus the cases a mirror must carry as the dumps do: deletions in ``_meta``, a
    missing body (a null in Parquet), a removal recorded by moderators."""
    subs, coms = generate(60, seed=7)
    subs, coms = copy.deepcopy(subs), copy.deepcopy(coms)
    for index, comment in enumerate(coms):
        if "_meta" in comment and index % 5 == 0:
            comment["_meta"]["was_deleted_later"] = True  # dropped as deleted-later on both paths
    coms[3].pop("body")  # rejected missing-field on both paths
    return subs, coms


def _write_json(folder, subs, coms):
    folder.mkdir(parents=True)
    for name, records in (("RS_2014-05.jsonl.zst", subs), ("RC_2014-05.jsonl", coms)):
        data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")
        (folder / name).write_bytes(zstandard.ZstdCompressor().compress(data) if name.endswith(".zst") else data)
    return folder


def _dataset_digests(folder) -> dict:
    files = sorted(p for config in ("single_turn", "multi_turn") for p in (folder / config).glob("*.parquet"))
    assert len(files) >= 4
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("parquet34")
    subs, coms = _records()
    json_dir = _write_json(root / "json", subs, coms)
    paths = write_arctic(str(root / "arctic"), subs, coms, row_group_size=300)
    return root, json_dir, root / "arctic", paths


@pytest.mark.parametrize("time_range", [(), ("--since", "2014-05-14", "--until", "2014-05-16")])
def test_parquet_and_json_lines_build_the_same_bytes(inputs, time_range):
    root, json_dir, arctic, paths = inputs
    assert any("/data/comments/2014/05/000.parquet" in p for p in paths)
    tag = "range" if time_range else "all"
    built = {}
    for name, given in (("json", json_dir), ("parquet", arctic)):
        out = root / f"out-{name}-{tag}"
        summary = run(["--input", str(given), "--output", str(out), "--skip-testset", *time_range], quiet=True)
        built[name] = (out, summary)
    (json_out, json_summary), (pq_out, pq_summary) = built["json"], built["parquet"]
    assert _dataset_digests(json_out) == _dataset_digests(pq_out)
    assert json_summary["splits"] == pq_summary["splits"] and pq_summary["splits"]["single_turn"]["train"] > 100
    if time_range:  # late submissions were skipped in the reader, before conversion
        assert pq_summary["counts"]["dropped-out-of-range"] > 0
        assert pq_summary["counts"]["posts-kept-submissions"] < json_summary["counts"]["posts-kept-submissions"]
    else:
        assert pq_summary["counts"] == json_summary["counts"]
        for key in ("dropped-deleted-later", "rejected-missing-field", "dropped-bot"):
            assert pq_summary["counts"][key] > 0, key
    single = datasets.load_dataset(str(pq_out), "single_turn")
    assert single["train"].num_rows == pq_summary["splits"]["single_turn"]["train"]
    card = (pq_out / "README.md").read_text()
    digest = hashlib.sha256((arctic / "data/comments/2014/05/000.parquet").read_bytes()).hexdigest()
    assert f"| comments/2014/05/000.parquet |" in card and digest in card


def test_inputs_as_folder_glob_or_file(inputs):
    _, _, arctic, paths = inputs
    assert sources.resolve_inputs([str(arctic)]) == sorted(paths)
    assert sources.resolve_inputs([str(arctic / "data" / "**" / "*.parquet")]) == sorted(paths)
    assert sources.resolve_inputs([paths[0]]) == [paths[0]]


def _mixed_shard(path, rows_per_group=100):
    """Three row groups of other subreddits, one of r/movies (mixed case), one mixed with a null
    subreddit and a non-ASCII one."""
    def row(i, subreddit):
        return {"id": f"c{i:05d}", "body": f"text {i}", "parent_id": "t3_abc", "link_id": "t3_abc",
                "subreddit": subreddit, "created_utc": 1_400_000_000 + i}
    rows = [row(i, "AskReddit" if i % 2 else "AskScience") for i in range(300)]  # sorted: statistics help
    rows += [row(300 + i, "Movies" if i % 2 else "movies") for i in range(100)]
    rows += [row(400 + i, None if i == 0 else "m\u00f6vies" if i == 1 else "movies" if i < 50 else "pics")
             for i in range(100)]
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=rows_per_group)


def test_other_subreddits_are_filtered_before_conversion(tmp_path, monkeypatch):
    path = str(tmp_path / "000.parquet")
    _mixed_shard(path)
    converted, groups_read = [], []
    real_to_python, real_read = parquet_source._to_python, pq.ParquetFile.read_row_group
    monkeypatch.setattr(parquet_source, "_to_python", lambda t: converted.append(len(t)) or real_to_python(t))
    monkeypatch.setattr(pq.ParquetFile, "read_row_group",
                        lambda self, i, **kw: groups_read.append(i) or real_read(self, i, **kw))
    items = list(parquet_source.read_items(path, ("movies",)))
    ok = [i for i in items if i[0] == "ok"]
    skipped = sum(i[1] for i in items if i[0] == "skipped")
    assert sum(converted) == len(ok) == 100 + 50 and skipped == 350  # 48 movies + null + mövies in group 5
    assert not set(groups_read) & {0, 1, 2}  # statistics: no r/movies in them, never read
    assert {i[2].get("subreddit") for i in ok} == {"movies", "Movies", None, "m\u00f6vies"}
    assert ok[0][1] == 301  # row numbers are the file's, from 1
    assert [i for i in items if i[0] == "rejected"] == []


def test_until_is_pushed_down_for_submissions(tmp_path):
    subs, coms = generate(20, seed=3, hard_cases=False)
    paths = write_arctic(str(tmp_path), subs, coms, row_group_size=50)
    until = sorted(int(float(s["created_utc"])) for s in subs)[12]
    skipped = {}
    for path in paths:
        items = list(parquet_source.read_items(path, ("movies",), until=until))
        ok = [i[2] for i in items if i[0] == "ok"]
        skipped[path.split("/data/")[1]] = sum(i[1] for i in items if i[0] == "skipped" and i[2:] == ("out-of-range",))
        assert all("title" not in r or r["created_utc"] <= until for r in ok)
        if "comments" in path:  # comments after --until stay: their thread may be in range
            assert any(r["created_utc"] > until for r in ok)
    assert skipped == {"submissions/2014/05/000.parquet": 7, "comments/2014/05/000.parquet": 0}


def test_hostile_parquet_is_a_dead_letter(tmp_path):
    good = tmp_path / "good.parquet"
    _mixed_shard(str(good))
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(good.read_bytes()[:-100] + b"x" * 100)
    garbled = tmp_path / "garbled.parquet"  # footer intact, the pages of r/movies' row groups overwritten
    data = bytearray(good.read_bytes())
    group = pq.ParquetFile(good).metadata.row_group(3)
    start = min(group.column(i).dictionary_page_offset or group.column(i).data_page_offset for i in range(4))
    data[start:start + 2000] = b"\xff" * 2000
    garbled.write_bytes(bytes(data))
    wrong = tmp_path / "wrong.parquet"
    pq.write_table(pa.table({"subreddit": ["movies"], "created_utc": [1], "id": [7], "body": ["x"]}), wrong)
    missing = tmp_path / "missing.parquet"
    pq.write_table(pa.table({"created_utc": [1], "id": ["a"], "body": ["x"]}), missing)
    reasons = {}
    for path in (corrupt, garbled, wrong, missing):
        items = list(parquet_source.read_items(str(path), ("movies",)))
        bad = [i for i in items if i[0] == "rejected"]
        assert len(bad) == 1 and str(path) in bad[0][3], items
        reasons[path.name] = bad[0][2]
    assert reasons == {"corrupt.parquet": "corrupt-file", "garbled.parquet": "corrupt-file",
                       "wrong.parquet": "bad-parquet-schema", "missing.parquet": "bad-parquet-schema"}


def test_corrupt_shard_in_a_build_is_counted(tmp_path):
    subs, coms = generate(15, seed=5, hard_cases=False)
    write_arctic(str(tmp_path / "in"), subs, coms)
    bad = tmp_path / "in" / "data" / "comments" / "2014" / "06" / "000.parquet"
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_bytes(b"PAR1 not really")
    summary = run(["--input", str(tmp_path / "in"), "--output", str(tmp_path / "out"), "--skip-testset"], quiet=True)
    assert summary["counts"]["rejected-corrupt-file"] == 1
    letters = [json.loads(line) for line in (tmp_path / "out" / "rejected" / "rejected.jsonl").read_text().splitlines()]
    assert [d["file"] for d in letters if d["reason"] == "corrupt-file"] == ["comments/2014/06/000.parquet"]


def test_parts_share_the_row_groups(inputs):
    """--workers: part k of n reads row groups k, k+n, ...; together they give the file's items."""
    _, _, _, paths = inputs
    comments = next(p for p in paths if "/comments/" in p)
    assert pq.ParquetFile(comments).metadata.num_row_groups > 2
    whole = list(sources.read_items(comments, ("movies",)))
    parts = [list(sources.read_items(comments, ("movies",), part=k, parts=2)) for k in range(2)]
    assert all(parts)
    assert sorted(i[1] for p in parts for i in p if i[0] == "ok") == [i[1] for i in whole if i[0] == "ok"]
    assert sum(i[1] for p in parts for i in p if i[0] == "skipped") == sum(i[1] for i in whole if i[0] == "skipped")


def test_remote_file_is_read_once_and_hashed(inputs, monkeypatch):
    """The hf:// branch (no network here: the Hub's file system is replaced by local files): the
    one front-to-back pass hashes the file and the rows are read from the bytes it kept."""
    from lsdscc.corpus import provenance

    _, _, _, paths = inputs
    path = next(p for p in paths if "/comments/" in p)
    local, opened = list(parquet_source.read_items(path, ("movies",))), []
    monkeypatch.setattr(parquet_source, "is_hf", lambda p: True)
    monkeypatch.setattr(parquet_source, "_open", lambda p: opened.append(p) or open(p, "rb"))
    tally = provenance.FileTally("hf://datasets/open-index/arctic/data/comments/2014/05/000.parquet")
    remote = list(parquet_source.read_items(path, ("movies",), tap=tally.tap))
    assert remote == local and len(opened) == 1
    with open(path, "rb") as fh:
        assert tally.summary()["sha256"] == hashlib.sha256(fh.read()).hexdigest()
    assert tally.summary()["name"] == "comments/2014/05/000.parquet"


def test_batches_inside_a_row_group_give_the_same_items(inputs, monkeypatch):
    _, _, _, paths = inputs
    comments = next(p for p in paths if "/comments/" in p)
    whole = list(parquet_source.read_items(comments, ("movies",), until=1_400_100_000))
    monkeypatch.setattr(parquet_source, "BATCH_ROWS", 37)  # row groups of 300 rows: 9 batches each
    batched = list(parquet_source.read_items(comments, ("movies",), until=1_400_100_000))
    ok = [i for i in whole if i[0] == "ok"]
    assert [i for i in batched if i[0] == "ok"] == ok and len(ok) > 1000
    assert sum(i[1] for i in batched if i[0] == "skipped") == sum(i[1] for i in whole if i[0] == "skipped")


def test_column_types_a_converter_may_choose_normalise_as_json(tmp_path):
    """Timestamps, dictionary and large strings, ``_meta`` as a struct, a map or JSON text: the
    records normalise to the same outcomes as the JSON records they came from."""
    from lsdscc.corpus.config import CorpusConfig
    from lsdscc.corpus.records import normalize

    records = [
        {"id": "c1", "body": "a reply", "parent_id": "t3_abc", "link_id": "t3_abc", "subreddit": "movies",
         "created_utc": 1_700_000_123, "author": "someone", "_meta": {"was_deleted_later": True}},
        {"id": "c2", "body": "kept", "parent_id": "t1_c1", "link_id": "t3_abc", "subreddit": "Movies",
         "created_utc": 1_700_000_456, "author": "other", "_meta": {"was_deleted_later": False}},
        {"id": "c3", "body": "removed later", "parent_id": "t1_c1", "link_id": "t3_abc", "subreddit": "movies",
         "created_utc": 1_700_000_789, "author": "x", "_meta": {"removal_type": "moderator"}},
    ]
    metas = {
        "struct": pa.array([r["_meta"] for r in records]),
        "map": pa.array([[(k, str(v)) for k, v in r["_meta"].items()] for r in records],
                        pa.map_(pa.string(), pa.string())),
        "json": pa.array([json.dumps(r["_meta"]) for r in records]),
    }
    config = CorpusConfig()
    expected = [normalize(r, config) for r in records]
    assert [type(e).__name__ for e in expected] == ["Dropped", "Kept", "Dropped"]
    for name, meta in metas.items():
        table = pa.table({
            "id": pa.array([r["id"] for r in records], pa.large_string()),
            "body": pa.array([r["body"] for r in records]).dictionary_encode(),
            "parent_id": [r["parent_id"] for r in records], "link_id": [r["link_id"] for r in records],
            "subreddit": [r["subreddit"] for r in records], "author": [r["author"] for r in records],
            "created_utc": pa.array([r["created_utc"] * 1000 for r in records], pa.timestamp("ms", "UTC")),
            "title": pa.array([None] * 3, pa.string()), "_meta": meta,
        })
        path = tmp_path / f"{name}.parquet"
        pq.write_table(table, path)
        got = [i[2] for i in parquet_source.read_items(str(path), ("movies",)) if i[0] == "ok"]
        assert [normalize(r, config) for r in got] == expected, name
        assert all("title" not in r and type(r["created_utc"]) is int for r in got)


def test_unreachable_hub_is_one_line_error(monkeypatch):
    from multiref.util.errors import UserError

    class Offline:
        def isdir(self, path):
            raise ConnectionError("Name or service not known")

        glob = isdir

    monkeypatch.setattr(parquet_source, "_hf_fs", Offline)
    with pytest.raises(UserError, match=r"cannot list hf://datasets/open-index/arctic/data on the Hugging Face Hub"):
        parquet_source.hf_sizes(["hf://datasets/open-index/arctic/data"])
    assert sources.resolve_inputs(["hf://datasets/open-index/arctic/data"]) == ["hf://datasets/open-index/arctic/data"]
