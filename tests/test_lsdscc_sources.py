"""Dump sources and schema variants (docs/corpus.md#dump-schema-by-era; issue #3 part 1)."""

import gzip
import json
import os

import pytest
import zstandard

from tests.helpers import data_path
from lsdscc.corpus import records, sources
from lsdscc.corpus.config import CorpusConfig
from multiref.util.errors import UserError

CONFIG = CorpusConfig()


def _normalized(path):
    out = []
    for item in sources.read_items(str(path)):
        assert item[0] == "ok"
        outcome = records.normalize(item[2], CONFIG)
        if isinstance(outcome, records.Kept):
            out.append(outcome.value)
        else:
            out.append(outcome.reason if isinstance(outcome, records.Dropped) else f"rejected-{outcome.reason}")
    return out


def test_schema_variants():
    got = _normalized(data_path("lsdscc", "variants.jsonl"))
    posts = {p.id: p for p in got if isinstance(p, records.Post)}
    assert posts["t3_s1"] == records.Post("t3", "t3_s1", "t3_s1", "", 1420070400, "What did you think of Inception?")
    assert posts["t1_c1"].created_utc == 1420070460 and posts["t1_c1"].parent_id == "t3_s1"
    assert posts["t1_c2"].created_utc == 1420070520  # float, capitalised subreddit
    assert posts["t1_c3"].parent_id == "t3_s1" and posts["t1_c3"].link_id == "t3_s1"  # bare ids
    assert posts["t1_c4"].parent_id == "t1_c3"
    assert posts["t1_c5"].text == "Wrapped like the Reddit API."
    assert "t1_c6" in posts  # only a name, no id
    drops = [p for p in got if isinstance(p, str)]
    assert drops == ["deleted", "removed", "bot", "bot", "other-subreddit", "deleted-later"]


def test_bigquery_array_with_all_string_values():
    got = _normalized(data_path("lsdscc", "bigquery_thread.json"))
    assert [(p.id, p.parent_id, p.created_utc) for p in got] == [
        ("t1_bqc1", "t3_bq1", 1520550000),
        ("t1_bqc2", "t1_bqc1", 1520550110),
        ("t1_bqc3", "t1_bqc1", 1520550220),
        ("t3_bq1", "", 1520549000),
    ]
    assert got[3].text == "Nolan ranking thread\n\nRank them all."


def test_bad_lines_are_reported_with_reasons():
    items = list(sources.read_items(str(data_path("lsdscc", "bad.jsonl"))))
    reasons = []
    for item in items:
        if item[0] == "rejected":
            reasons.append((item[1], item[2]))
        else:
            outcome = records.normalize(item[2], CONFIG)
            reasons.append((item[1], "ok" if isinstance(outcome, records.Kept) else outcome.reason))
    assert reasons == [
        (1, "ok"), (2, "malformed-json"), (3, "not-object"), (4, "wrong-type"), (5, "missing-field"),
        (6, "wrong-type"), (7, "unknown-kind"), (8, "not-utf8"),
    ]


def test_redaction_removes_usernames():
    raw = '{"author": "secret_name", "author_fullname": "t2_x", "body": "hi"}'
    assert "secret_name" not in records.redact(raw) and "t2_x" not in records.redact(raw)
    assert "secret_name" not in records.redact_record({"author": "secret_name", "body": "x"})


@pytest.mark.parametrize("compress", ["zst", "gz", "plain"])
def test_compressed_inputs_are_sniffed(tmp_path, compress):
    data = (data_path("lsdscc", "variants.jsonl")).read_bytes()
    path = tmp_path / "dump.bin"  # the name says nothing: magic bytes decide
    if compress == "zst":
        path.write_bytes(zstandard.ZstdCompressor().compress(data) * 2)  # two frames
    elif compress == "gz":
        path.write_bytes(gzip.compress(data))
    else:
        path.write_bytes(data)
    items = list(sources.read_items(str(path)))
    expected = 13 * (2 if compress == "zst" else 1)
    assert len(items) == expected and all(i[0] == "ok" for i in items)


@pytest.mark.parametrize("compress", ["zst", "gz"])
def test_truncated_file_is_reported_with_progress(tmp_path, compress):
    data = b"".join(b'{"n": %d, "pad": "%s"}\n' % (i, b"x" * 50) for i in range(40000))
    blob = zstandard.ZstdCompressor(level=1).compress(data) if compress == "zst" else gzip.compress(data, 1)
    path = tmp_path / f"RC_cut.jsonl.{compress}"
    path.write_bytes(blob[: len(blob) // 2])
    items = list(sources.read_items(str(path)))
    last = items[-1]
    assert last[0] == "rejected" and last[2] == "truncated-file"
    assert str(path) in last[3] and f"after {len(items) - 1:,} lines" in last[3]
    assert all(i[0] == "ok" for i in items[:-1]) and 0 < len(items) - 1 < 40000


def test_large_window_zstd(tmp_path):
    # Reddit's dumps use --long=31 windows; the reader allows a 2 GiB window.
    data = b'{"a": 1}\n' * 1000
    params = zstandard.ZstdCompressionParameters.from_level(3, window_log=27)
    path = tmp_path / "RC_long.zst"
    path.write_bytes(zstandard.ZstdCompressor(compression_params=params).compress(data))
    assert len(list(sources.read_items(str(path)))) == 1000


def test_resolve_inputs(tmp_path):
    (tmp_path / "comments.jsonl").write_text("{}\n")
    (tmp_path / "submissions.jsonl").write_text("{}\n")
    (tmp_path / "notes.txt").write_text("x")
    folder = sources.resolve_inputs([str(tmp_path)])
    assert [os.path.basename(p) for p in folder] == ["comments.jsonl", "submissions.jsonl"]
    assert sources.resolve_inputs([str(tmp_path / "*.jsonl"), str(tmp_path / "comments.jsonl")]) == folder
    with pytest.raises(UserError, match="input not found"):
        sources.resolve_inputs([str(tmp_path / "nope.zst")])
    with pytest.raises(UserError, match="no input files match"):
        sources.resolve_inputs([str(tmp_path / "RC_*.zst")])
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(UserError, match="no dump files"):
        sources.resolve_inputs([str(empty)])


def test_bundled_sample_is_small_and_default():
    paths = sources.default_inputs()
    assert [os.path.basename(p) for p in paths] == ["RC_sample.jsonl.zst", "RS_sample.jsonl.zst"]
    assert sum(os.path.getsize(p) for p in paths) < 1_000_000


def test_sample_generator_is_seeded():
    from lsdscc.corpus.sample_gen import generate

    a = generate(5, seed=3)
    b = generate(5, seed=3)
    assert json.dumps(a) == json.dumps(b)
    assert json.dumps(a) != json.dumps(generate(5, seed=4))


@pytest.mark.parametrize("line", [
    b'{"a":1,"a":2}', b'{"a":"\\ud800"}', b'{"a":NaN}', b'{"a":1e400}', b'{"a":123456789012345678901234567890}',
    b'{"a":-9223372036854775809}', b'{"a":18446744073709551615}', b'{"a":"x\x01y"}', b'\xef\xbb\xbf{"a":1}',
    b' {"a":1}\r', b'{"a":0.1,"b":-0.0,"c":1559347200.0,"d":-0,"e":1E2,"f":2.2250738585072011e-308}',
    b'{"a":"\\u00e9\\ud83d\\ude00","b":[1,{"c":null}],"d":true}', b'[1]', b'{"a":1', b'\xff{"a":1}'])
def test_parse_matches_the_standard_json_parser(line):
    # The fast parser (orjson) must give what json.loads gives, value types included (its
    # floats for integers past 64 bits, NaN, lone surrogates and errors go to json).
    import json

    from lsdscc.corpus.sources import _parse

    try:
        expected = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        expected = None
    got = _parse(line)
    if expected is None or not isinstance(expected, dict):
        assert got[0] == "rejected"
    else:
        assert got[0] == "ok" and repr(got[1]) == repr(expected)
        assert [type(v) for v in got[1].values()] == [type(v) for v in expected.values()]
