"""The reader's subreddit prefilter (issue 10 item 4): lines of other subreddits are skipped
before JSON parsing, never a wanted line, and the counts stay those of the exact path."""

import gzip
import json
import os
import random
import subprocess
import sys
from collections import Counter
from unittest import mock

import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from lsdscc.corpus import cleaning, records, sources
from lsdscc.corpus.config import CorpusConfig
from lsdscc.corpus.sample_gen import generate

MOVIES = CorpusConfig()  # subreddits=("movies",)
NATIVE_SCAN = sources._NATIVE_SCAN


def _comment(subreddit="pics", cid="c1", body="a comment", **extra) -> dict:
    record = {"id": cid, "body": body, "author": "someone", "parent_id": "t3_s1", "link_id": "t3_s1",
              "subreddit": subreddit, "created_utc": 1420070400}
    record.update(extra)
    return record


def _dumps(record: dict, separators=(",", ":")) -> str:
    return json.dumps(record, separators=separators, ensure_ascii=False)


# (line, skipped by the prefilter for r/movies?) -- every line is also checked against the
# exact path: a skipped line must be one normalize drops as other-subreddit.
CASES = [
    (_dumps(_comment("pics")), True),
    (_dumps(_comment("pics"), separators=(", ", ": ")), True),  # spacing variants
    ('{"subreddit" :\t "pics", "body": "x", "id": "c1", "parent_id": "t3_s1", "link_id": "t3_s1", "created_utc": 1}', True),
    (_dumps(_comment("pics")) + "\r", True),  # CRLF file
    (_dumps(_comment("moviescirclejerk")), True),
    (_dumps(_comment("movies")), False),
    (_dumps(_comment("Movies")), False),  # case variants
    (_dumps(_comment("MOVIES"), separators=(", ", ": ")), False),
    (_dumps(_comment("movies")).replace('"movies"', '"\\u006dovies"'), False),  # escaped value
    (_dumps(_comment("pics")).replace('"pics"', '"\\u0070ics"'), False),  # escaped, not wanted: exact path
    # the real key spelt with an escape after a decoy: json keeps the last one, "movies"
    ('{"subreddit":"pics",' + _dumps(_comment("movies"))[1:].replace('"subreddit"', '"sub\\u0072eddit"'), False),
    (_dumps({k: v for k, v in _comment().items() if k != "subreddit"}), False),  # no key: crawl folders
    (_dumps({**{k: v for k, v in _comment().items() if k != "subreddit"}, "subreddit_name_prefixed": "r/pics"}), False),
    (_dumps(_comment("pics", subreddit_name_prefixed="r/pics")), True),
    (_dumps(_comment("movies", subreddit_name_prefixed="r/movies")), False),
    (_dumps(_comment("pics", body='he wrote "subreddit": "movies" in a comment')), True),  # quoted in a body
    (_dumps(_comment("movies", body='he wrote "subreddit": "pics" in a comment')), False),
    (_dumps(_comment("movies", crosspost_parent_list=[{"subreddit": "pics"}])), False),  # nested twice
    (_dumps(_comment("pics", crosspost_parent_list=[{"subreddit": "movies"}])), False),  # false positive: slower only
    (_dumps({"kind": "t1", "data": _comment("pics")}), True),  # Reddit API wrapper
    (_dumps({"kind": "t1", "data": _comment("Movies")}), False),
    (_dumps(_comment(None)), False),  # null subreddit: rejected on the exact path
    (_dumps(_comment(7)), False),
    (_dumps(_comment("pics"))[:-1], False),  # cut line: malformed-json on the exact path
    (" " + _dumps(_comment("pics")), False),
    (_dumps(_comment("p\u00efcs")), False),  # non-ASCII value: exact path
    ("", False),
    ("   ", False),
    # normalize checks the subreddit first, so a skipped line counts alike whatever else it holds
    (_dumps(_comment("pics", created_utc="yesterday")), True),
    ('{"subreddit": "pics", "foo": 1}', True),
]


def _write(path, lines, compress="plain", newline_at_end=True):
    data = "\n".join(lines).encode("utf-8") + (b"\n" if newline_at_end else b"")
    if compress == "zst":
        data = zstandard.ZstdCompressor(level=1).compress(data)
    elif compress == "gz":
        data = gzip.compress(data)
    path.write_bytes(data)
    return str(path)


def _outcome(item, config=MOVIES) -> str:
    if item[0] == "rejected":
        return "rejected-" + item[2]
    outcome = records.normalize(item[2], config)
    if isinstance(outcome, records.Rejected):
        return "rejected-" + outcome.reason
    return "kept" if isinstance(outcome, records.Kept) else "dropped-" + outcome.reason


def tally(path, subreddits=None, config=MOVIES) -> tuple[Counter, list]:
    """What the pipeline would count and keep: (counters, kept (line, post) pairs)."""
    counts, kept = Counter(), []
    for item in sources.read_items(path, subreddits=subreddits):
        assert item[0] in ("ok", "rejected", "skipped"), item
        if item[0] == "skipped":
            assert item[1] > 0
            counts["records-read"] += item[1]
            counts["dropped-other-subreddit"] += item[1]
            continue
        if item[0] == "ok":
            counts["records-read"] += 1
        outcome = _outcome(item, config)
        counts[outcome] += 1
        if outcome == "kept":
            kept.append((item[1], records.normalize(item[2], config).value))
    return counts, kept


@pytest.mark.parametrize("line,skipped", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_each_line_variant(tmp_path, line, skipped):
    path = _write(tmp_path / "one.jsonl", [line])
    filtered = list(sources.read_items(path, subreddits=("movies",)))
    exact = list(sources.read_items(path))
    assert (filtered == [("skipped", 1)]) is skipped
    if skipped:
        assert [_outcome(i) for i in exact] == ["dropped-other-subreddit"]
    else:
        assert filtered == exact
    assert tally(path, ("movies",)) == tally(path)


def test_escaped_and_case_variants_are_kept(tmp_path):
    lines = [line for line, _ in CASES]
    path = _write(tmp_path / "all.jsonl", lines)
    counts, kept = tally(path, ("movies",))
    assert (counts, kept) == tally(path)
    # every spelling of r/movies in CASES (case, spacing, escapes, wrapper), by line number
    assert {n for n, _ in kept} == {6, 7, 8, 9, 11, 15, 17, 18, 21}
    skipped = sum(i[1] for i in sources.read_items(path, subreddits=("movies",)) if i[0] == "skipped")
    assert skipped == sum(1 for _, s in CASES if s)


def test_line_numbers_count_skipped_lines(tmp_path):
    lines = [_dumps(_comment("pics", cid=f"p{i}")) for i in range(5)] + [_dumps(_comment("movies", cid="m1"))]
    lines += ["{not json"] + [_dumps(_comment("funny", cid=f"f{i}")) for i in range(3)] + [_dumps(_comment("Movies", cid="m2"))]
    path = _write(tmp_path / "mixed.jsonl", lines, newline_at_end=False)
    items = list(sources.read_items(path, subreddits=["MOVIES"]))
    assert [(i[0], i[1]) for i in items if i[0] != "skipped"] == [("ok", 6), ("rejected", 7), ("ok", 11)]
    assert [i for i in items if i[0] == "skipped"] == [("skipped", 8)]


def test_invalid_utf8_of_another_subreddit_is_still_rejected(tmp_path):
    good = _dumps(_comment("pics", body="caf\u00e9 cr\u00e8me")).encode()
    bad = _dumps(_comment("pics", body="caf?")).encode().replace(b"caf?", b"caf\xe9")  # latin-1
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b"\n".join([good, bad, good, _dumps(_comment("movies")).encode()]) + b"\n")
    items = list(sources.read_items(str(path), subreddits=("movies",)))
    assert [(i[0], i[1], i[2] if i[0] == "rejected" else None) for i in items[:-1]] == [
        ("rejected", 2, "not-utf8"), ("ok", 4, None)]
    assert items[-1] == ("skipped", 2)
    assert tally(str(path), ("movies",)) == tally(str(path))


@pytest.mark.parametrize("last", ["pics", "movies"])
def test_unterminated_last_line_joins_the_last_block(tmp_path, last):
    lines = [_dumps(_comment("pics", cid=f"p{i}")) for i in range(3)] + [_dumps(_comment(last, cid="z"))]
    path = _write(tmp_path / "no_newline.jsonl", lines, newline_at_end=False)
    items = list(sources.read_items(path, subreddits=("movies",)))
    if last == "pics":
        assert items == [("skipped", 4)]
    else:
        assert [i[:2] for i in items] == [("ok", 4), ("skipped", 3)]


def test_a_wanted_name_that_is_not_plain_ascii_turns_the_prefilter_off(tmp_path):
    # "\u212a" (Kelvin sign) lowercases to "k": normalize keeps it for r/kpop, so must the reader
    config = CorpusConfig(subreddits=("kpop",))
    path = _write(tmp_path / "k.jsonl", [_dumps(_comment("\u212apop")), _dumps(_comment("pics"))])
    assert tally(path, ("kpop",), config) == tally(path, None, config)
    assert tally(path, ("kpop",), config)[0]["kept"] == 1
    turkish = list(sources.read_items(path, subreddits=("\u0130stanbul",)))  # lowercases to two code points
    assert [i[0] for i in turkish] == ["ok", "ok"]
    assert [i[0] for i in sources.read_items(path, subreddits=())] == ["ok", "skipped"]


def _mixed_lines(seed: int, count: int) -> list[str]:
    """The sample generator's r/movies threads, with most records moved to other subreddits
    and the rest spelt in the variants the dumps use."""
    rng = random.Random(seed)
    submissions, comments = generate(100, seed=seed)
    lines = []
    for record in (submissions + comments)[:count]:
        x = rng.random()
        if x < 0.7:
            record["subreddit"] = rng.choice(("pics", "AskReddit", "moviescirclejerk", "MovieSuggestions", "television"))
        elif x < 0.8:
            record["subreddit"] = rng.choice(("Movies", "MOVIES"))
        line = _dumps(record, separators=rng.choice(((",", ":"), (", ", ": "))))
        if x > 0.95:
            line = line.replace('"movies"', '"\\u006dovies"')
        lines.append(line)
    lines.insert(len(lines) // 2, '{"subreddit": "pics", "body": "cut')
    lines.insert(len(lines) // 3, "")
    return lines


@pytest.mark.parametrize("compress,chunk", [("zst", 257), ("zst", None), ("gz", 4096), ("plain", 1000)])
def test_generated_mixed_files_keep_the_same_records_and_counts(tmp_path, monkeypatch, compress, chunk):
    if chunk:  # small reads: many blocks, lines cut across chunks
        monkeypatch.setattr(sources, "_CHUNK", chunk)
    path = _write(tmp_path / "RC_mixed", _mixed_lines(5, 3000), compress)
    chunks = []
    real_chunks = sources._chunks

    def counted(fh):
        for data in real_chunks(fh):
            chunks.append(len(data))
            yield data

    monkeypatch.setattr(sources, "_chunks", counted)
    filtered, exact = tally(path, ("movies",)), tally(path)
    assert filtered == exact
    counts = filtered[0]
    assert counts["dropped-other-subreddit"] > 1000 and counts["kept"] > 300 and counts["rejected-malformed-json"] == 1
    chunks.clear()
    items = list(sources.read_items(path, subreddits=("movies",)))
    skips = [i[1] for i in items if i[0] == "skipped"]
    assert sum(skips) > 0.9 * counts["dropped-other-subreddit"]  # the prefilter did the work
    assert 1 <= len(skips) <= len(chunks)  # at most one ("skipped", n) per decompressed chunk
    assert (len(skips) >= 5) if chunk else (len(skips) == len(chunks))  # chunks of about 1 MiB each


def test_bundled_sample_same_with_and_without_prefilter():
    for path in sources.default_inputs():
        filtered, exact = tally(path, MOVIES.subreddits), tally(path)
        assert filtered == exact
    counts = sum((tally(p, MOVIES.subreddits)[0] for p in sources.default_inputs()), Counter())
    assert counts["dropped-other-subreddit"] > 0 and counts["kept"] > 1000


@pytest.mark.parametrize("compress", ["zst", "gz"])
def test_truncated_file_with_prefilter(tmp_path, compress):
    rng = random.Random(3)
    lines = [_dumps(_comment(rng.choice(("pics", "movies", "funny", "news")), cid=f"c{i}", body="x" * rng.randrange(80)))
             for i in range(40000)]
    data = ("\n".join(lines) + "\n").encode()
    blob = zstandard.ZstdCompressor(level=1).compress(data) if compress == "zst" else gzip.compress(data, 1)
    path = tmp_path / f"RC_cut.jsonl.{compress}"
    path.write_bytes(blob[: len(blob) // 2])
    items = list(sources.read_items(str(path), subreddits=("movies",)))
    last = items[-1]
    assert last[0] == "rejected" and last[2] == "truncated-file"
    read = sum(i[1] if i[0] == "skipped" else 1 for i in items[:-1])
    assert 0 < read < 40000 and f"after {read:,} lines" in last[3] and str(path) in last[3]
    assert any(i[0] == "skipped" for i in items) and all(i[0] in ("ok", "skipped") for i in items[:-1])
    exact = list(sources.read_items(str(path)))
    assert exact[-1] == last and len(exact) - 1 == read
    assert [i for i in items if i[0] == "ok"] == [i for i in exact[:-1] if i[2]["subreddit"] == "movies"]


def test_json_array_is_read_exactly_with_subreddits(tmp_path):
    path = tmp_path / "export.json"
    path.write_text(json.dumps([_comment("pics"), _comment("movies", cid="c2")]))
    assert list(sources.read_items(str(path), subreddits=("movies",))) == list(sources.read_items(str(path)))


def test_subreddits_must_be_names_not_one_string(tmp_path):
    path = _write(tmp_path / "one.jsonl", [_dumps(_comment("movies"))])
    with pytest.raises(TypeError, match="not one string: 'movies'"):
        list(sources.read_items(path, subreddits="movies"))


# --- the block-at-a-time path (_scan_regular) against the line rule (_scan_lines) ------------
_NAMES = ("pics", "movies", "Movies", "MOVIES", "moviescirclejerk", "AskReddit", "mOvIeS", "m", "")
# byte-level changes that each break one condition of the line rule (or quote the key harmlessly)
_MUTATIONS = (
    lambda line: line.replace(b'"subreddit"', b'"sub"'),  # no key
    lambda line: line[:-1] + b',"crosspost_parent_list":[{"subreddit":"pics"}]}',  # the key twice
    lambda line: line.replace(b'"subreddit":"', b'"subreddit"subreddit":"'),  # two overlapping keys
    lambda line: line.replace(b'"subreddit":"', b'"subreddit":"\\u006d'),  # escaped value
    lambda line: line.replace(b'"subreddit":"', b'"subreddit":"\\u004D'),
    lambda line: line.replace(b'"subreddit":"', b'"subreddit":"\xe2\x84\xaa'),  # Kelvin sign: lowercases to k
    lambda line: line.replace(b'"subreddit":"', b'"subreddit":"caf\xc3\xa9'),  # non-ASCII value
    lambda line: line.replace(b'"subreddit"', b'"sub\\u0072eddit"'),  # the key spelt with an escape
    lambda line: line.replace(b'"body":"', b'"body":"\\u0073'),  # an escape elsewhere in the line
    lambda line: line.replace(b'"body":"', b'"body":"\xff'),  # invalid UTF-8
    lambda line: line.replace(b'"body":"', b'"body":"he said subreddit\\" and \\"subreddit\\": \\"movies\\" '),
    lambda line: line.replace(b'"subreddit":"', b'"subreddit":null,"x":"'),  # not a string
    lambda line: line.replace(b'"subreddit":"', b'"subreddit" :\t"'),  # spacing: still regular
    lambda line: line + b"\r",  # CRLF: still regular
    lambda line: b" " + line,
    lambda line: line[:-1],  # cut
    lambda line: line[:-1] + b"\r",  # cut, with a CR
    lambda line: b"",  # blank line
    lambda line: b"[" + line + b"]",
    lambda line: line.replace(b'"body":"', b'"body":"\x00'),
    lambda line: line.replace(b'"body":"', b'"body":"' + b"x" * 700),  # over the (patched) line limit
)


@st.composite
def _blocks(draw):
    """(block, whether a line was changed): lines of other subreddits and r/movies spellings, a
    few of them changed by one of :data:`_MUTATIONS` (one per block, so each meets the block path alone)."""
    lines, mutated = [], False
    mutation = draw(st.sampled_from(_MUTATIONS))
    for i in range(draw(st.integers(1, 12))):
        record = _comment(draw(st.sampled_from(_NAMES)), cid=f"c{i}", body=draw(st.sampled_from(("a", "Movies", "x y"))))
        if draw(st.integers(0, 9)) == 0:
            record = {"kind": "t1", "data": record}
        line = _dumps(record, separators=draw(st.sampled_from(((",", ":"), (", ", ": "))))).encode()
        if draw(st.integers(0, 3)) == 0:
            line, mutated = mutation(line), True
        lines.append(line)
    return b"\n".join(lines), mutated


@settings(derandomize=True, max_examples=400, deadline=None, database=None)
@given(_blocks(), st.sampled_from([frozenset({b"movies"}), frozenset({b"pics", b"movies"}), frozenset()]))
def test_block_path_equals_the_line_rule_and_never_skips_a_kept_line(case, wanted):
    block, mutated = case
    with mock.patch.object(sources, "MAX_LINE_BYTES", 600):  # the long-line check without 1 MiB lines
        lines = block.split(b"\n")
        reference = sources._scan_lines(block, lines, wanted)
        fast = sources._scan_regular(block, lines, wanted)
        native = NATIVE_SCAN(block, sources._KEY, tuple(wanted), sources.MAX_LINE_BYTES)
        assert sources._scan_block(block, wanted) == (reference, len(lines) - len(reference), len(lines))
        assert fast is None or fast == reference
        assert native == (reference, len(lines))  # C: every block, invalid UTF-8 included
        if not mutated:  # a block of plain comment lines is decided a block at a time, with C or without
            assert fast is not None
        config = CorpusConfig(subreddits=tuple(n.decode() for n in wanted) or ("none-wanted",))
        parsed = {index for index, _, _ in reference}
        for index, line in enumerate(lines):
            if index not in parsed:  # skipped: the exact path drops it as other-subreddit, or it is not
                item = sources._item(index + 1, line, 0)  # JSON (read_items' documented exception)
                assert _outcome(item, config) in ("dropped-other-subreddit", "rejected-malformed-json"), line


def test_the_c_scanner_is_built():
    assert NATIVE_SCAN is not None, "lsdscc/corpus/_sources_native.c is not built: run `pip install -e .` with a C compiler"


@pytest.mark.parametrize("value,off", [("1", True), ("0", False)])
def test_no_c_extension_turns_the_c_scanner_off(value, off):
    code = ("from lsdscc.corpus import sources; "
            "print(sources._NATIVE_SCAN is None and sources._shape_flags is sources._python_shape_flags)")
    env = {**os.environ, cleaning.NO_C_EXTENSION: value}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == str(off)


@pytest.mark.parametrize("compress", ["zst", "plain"])
def test_same_items_with_and_without_the_c_scanner(tmp_path, monkeypatch, compress):
    lines = _mixed_lines(9, 3000)
    lines[10:10] = [_dumps(_comment(rng_name, cid=f"x{i}")) for i, rng_name in enumerate(["pics", "Movies"] * 800)]
    path = _write(tmp_path / "RC_mixed", lines, compress)
    with_c = list(sources.read_items(path, subreddits=("movies", "television")))
    monkeypatch.setattr(sources, "_NATIVE_SCAN", None)
    assert list(sources.read_items(path, subreddits=("movies", "television"))) == with_c
    assert sum(i[1] for i in with_c if i[0] == "skipped") > 1000 and sum(i[0] == "ok" for i in with_c) > 1000


def test_a_month_of_comments_is_read_a_block_at_a_time(tmp_path, monkeypatch):
    rng = random.Random(11)
    lines = [_dumps(_comment(rng.choice(("pics", "news", "movies", "Movies")), cid=f"c{i}", body="b" * rng.randrange(900)))
             for i in range(6000)]
    path = _write(tmp_path / "RC_month.zst", lines, "zst")
    monkeypatch.setattr(sources, "_NATIVE_SCAN", None)  # the Python block path (the C one: the property test)
    calls = Counter()
    for name in ("_scan_regular", "_scan_lines"):
        real = getattr(sources, name)
        monkeypatch.setattr(sources, name, lambda *a, _real=real, _name=name: calls.update([_name]) or _real(*a))
    assert tally(path, ("movies",)) == tally(path)
    assert calls["_scan_regular"] >= 3 and calls["_scan_lines"] == 0


# --- the C scanner's UTF-8 check (the lines it would skip) and its shape flags (_parse's checks) ----
def _utf8_cases() -> list:
    """Byte strings around every boundary of UTF-8: all pairs of bytes, three- and four-byte
    forms with each lead byte and edge continuation bytes, cut forms, after 0-9 ASCII bytes
    (the eight-byte ASCII step of the C check)."""
    edges = (0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xFF)
    cases = [bytes([a, b]) for a in range(256) for b in range(256)]
    cases += [bytes([a, b, c]) for a in range(0xC0, 0x100) for b in edges for c in edges]
    cases += [bytes([a, b, c, d]) for a in range(0xE0, 0x100) for b in edges for c in (0x80, 0xBF, 0x41)
              for d in (0x80, 0xBF, 0x41)]
    cases += [b"x" * k + bytes(t) for k in range(10) for t in ([0xE2, 0x82], [0xF0, 0x9F, 0x98, 0x80], [0xED, 0xA0, 0x80])]
    return [c for c in cases if not {0x22, 0x5C, 0x0A} & set(c)]  # no quote, backslash or line end


def _native_skips(bodies: list) -> list:
    lines = [b'{"subreddit":"pics","body":"' + body + b'"}' for body in bodies]
    exact, count = NATIVE_SCAN(b"\n".join(lines), sources._KEY, (b"movies",), sources.MAX_LINE_BYTES)
    assert count == len(lines)
    parsed = {index for index, _, _ in exact}
    return [index not in parsed for index in range(len(lines))]


def test_the_c_scanner_skips_a_line_only_when_python_decodes_it():
    cases = _utf8_cases()
    assert _native_skips(cases) == list(map(sources._is_utf8, cases))


@settings(derandomize=True, max_examples=300, deadline=None, database=None)
@given(st.lists(st.binary(max_size=40), min_size=1, max_size=20))
def test_the_c_scanner_utf8_check_on_random_bytes(bodies):
    bodies = [bytes(c for c in b if c not in b'"\\\ns') for b in bodies]  # (no "s": no second "subreddit" key)
    assert _native_skips(bodies) == list(map(sources._is_utf8, bodies))


@settings(derandomize=True, max_examples=400, deadline=None, database=None)
@given(st.lists(st.sampled_from([b"1", b"9", b"0", b"12345", b"[", b"{", b"]", b"a", b"\xff", b"-", b" "]), max_size=120),
       st.integers(-1, 12), st.integers(1, 25))
def test_the_c_shape_flags_equal_pythons(parts, max_depth, digits):
    line = b"".join(parts)
    assert sources._NATIVE.shape(line, max_depth, digits) == sources._python_shape_flags(line, max_depth, digits)


def test_the_shape_flags_of_real_limits():
    deep, long_number = b"[" * (sources.MAX_DEPTH + 1), b'{"a":' + b"1" * 19 + b"}"
    for shape in (sources._NATIVE.shape, sources._python_shape_flags):
        assert shape(deep, sources.MAX_DEPTH, 19) == sources._MANY_BRACKETS
        assert shape(deep[1:], sources.MAX_DEPTH, 19) == 0
        assert shape(long_number, sources.MAX_DEPTH, 19) == sources._LONG_DIGITS
        assert shape(long_number.replace(b"1", b"", 1), sources.MAX_DEPTH, 19) == 0
    with pytest.raises(TypeError):
        sources._NATIVE.shape("text", 1, 1)
    with pytest.raises(ValueError):
        sources._NATIVE.shape(b"1", 1, 0)
