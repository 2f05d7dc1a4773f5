"""Every decoder and reader is bounded (issue 35, faults 3, 4, 5, 7, 8, 9, 10, 21, 22, 24).

Each case builds its small hostile fixture here: a dump that starts with a zstd skippable
frame (as ``pzstd`` writes it), xz / bzip2 / 7z / zip dumps, ``/dev/zero``, over-long lines
plain and as a 19 KB decompression bomb, a JSON array bomb, a DailyDialog release zip bomb,
a release folder whose path holds ``!``, a 20,000-turn DailyDialog line, and
``--verify-hashes`` over a FIFO and two inputs of one name. Time is bounded by
:func:`tests.test_lsdscc_hostile.time_limit`; memory by running the bombs in a child process
and reading its peak resident size.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import json
import lzma
import os
import subprocess
import sys
import threading
import zipfile

import pytest
import zstandard

from dailydialog_pp import readers, zipped
from lsdscc.corpus import provenance, sources
from multiref.util.errors import UserError
from tests.test_lsdscc_hostile import time_limit

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE_DD = os.path.join(REPO, "dailydialog_pp", "sample")


def _line(i: int, body: str = "a fine comment") -> bytes:
    return json.dumps({"id": f"c{i}", "subreddit": "movies", "body": body, "link_id": "t3_s",
                       "parent_id": "t3_s", "created_utc": 1500000000 + i}).encode()


GOOD = b"\n".join(_line(i) for i in range(200)) + b"\n"


def _kinds(path, **kwargs) -> list:
    return [(item[0], item[2] if item[0] == "rejected" else None) for item in sources.read_items(str(path), **kwargs)]


def _skippable(payload: bytes, nibble: int = 0) -> bytes:
    return bytes([0x50 | nibble]) + b"\x2a\x4d\x18" + len(payload).to_bytes(4, "little") + payload


# -- fault 3: compression by content, skippable frames -----------------------------------------

@pytest.mark.parametrize("layout", ["pzstd header", "between frames", "seekable index at the end", "only 15"])
def test_zstd_with_skippable_frames_reads_like_the_plain_file(tmp_path, layout):
    zc = zstandard.ZstdCompressor(level=3)
    half = GOOD.index(b"\n", len(GOOD) // 2) + 1
    first, second = zc.compress(GOOD[:half]), zc.compress(GOOD[half:])
    blob = {"pzstd header": _skippable(b"\x19\x00\x00\x00") + first + _skippable(b"\x07\x00\x00\x00") + second,
            "between frames": first + _skippable(b"x" * 100, 7) + second,
            "seekable index at the end": first + second + _skippable(b"\x00" * 30, 14),
            "only 15": _skippable(b"", 15) + first + second}[layout]
    (tmp_path / "RC.bin").write_bytes(blob)
    (tmp_path / "plain.jsonl").write_bytes(GOOD)
    got = list(sources.read_items(str(tmp_path / "RC.bin")))
    assert got == list(sources.read_items(str(tmp_path / "plain.jsonl"))) and len(got) == 200


@pytest.mark.skipif(not os.path.exists("/usr/bin/pzstd"), reason="the pzstd tool is not installed")
def test_a_real_pzstd_file_reads_like_the_plain_file(tmp_path):
    (tmp_path / "plain.jsonl").write_bytes(GOOD)
    subprocess.run(["pzstd", "-q", "-p", "2", str(tmp_path / "plain.jsonl"), "-o", str(tmp_path / "RC.zst")], check=True)
    assert (tmp_path / "RC.zst").read_bytes()[:4] == b"\x50\x2a\x4d\x18"  # its skippable frame first
    assert list(sources.read_items(str(tmp_path / "RC.zst"))) == list(sources.read_items(str(tmp_path / "plain.jsonl")))


def _seven_zip_like(data: bytes) -> bytes:
    return b"7z\xbc\xaf\x27\x1c\x00\x04" + data  # the 7z signature header; the reader stops at it


def _zip(data: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("RC.jsonl", data)
    return buf.getvalue()


UNSUPPORTED = {"xz": lzma.compress, "bzip2": bz2.compress, "7z": _seven_zip_like, "zip": _zip}


@pytest.mark.parametrize("kind", sorted(UNSUPPORTED))
def test_xz_bz2_7z_and_zip_dumps_are_named_with_the_command_that_converts_them(tmp_path, kind):
    path = tmp_path / "RC_2017-01.jsonl.bin"
    path.write_bytes(UNSUPPORTED[kind](GOOD))
    (tmp_path / "RS_2017-01.jsonl").write_bytes(GOOD)
    with pytest.raises(UserError) as caught:
        sources.resolve_inputs([str(tmp_path / "RS_2017-01.jsonl"), str(path)])
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: compressed with {kind},")
    assert f"-o RC_2017-01.jsonl.zst" in message and "| zstd" in message
    # through a FIFO (not opened before the job): one dead letter naming it, the file never read as text
    fifo = tmp_path / "RC_2017-02.jsonl"
    os.mkfifo(fifo)
    assert sources.resolve_inputs([str(fifo)]) == [str(fifo)]
    writer = _feed(fifo, path.read_bytes())
    with time_limit(30):
        items = list(sources.read_items(str(fifo)))
    writer.join(5)
    assert [i[2] for i in items] == ["unsupported-compression"] and f"compressed with {kind}" in items[0][3]
    assert "convert it first" in items[0][3]


def test_the_build_warns_of_files_it_could_not_decode():
    from multiref_cli.lsdscc.build import format_warnings

    lines = format_warnings({"rejected-unsupported-compression": 2})
    assert len(lines) == 1 and lines[0].startswith("warning: 2 input file(s)") and "rejected.jsonl" in lines[0]


def test_an_xz_dump_beside_good_ones_stops_the_build_with_one_line(tmp_path):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "RC_good.jsonl").write_bytes(GOOD)
    (tmp_path / "in" / "RC_bad.jsonl.xz").write_bytes(lzma.compress(GOOD))
    done = _cli("lsdscc", "build", "--skip-testset", "--input", str(tmp_path / "in" / "RC_good.jsonl"),
                "--input", str(tmp_path / "in" / "RC_bad.jsonl.xz"), "--output", str(tmp_path / "out"), timeout=120)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert "RC_bad.jsonl.xz: compressed with xz" in lines[0] and "xz -dc" in lines[0]
    assert not (tmp_path / "out").exists() and not [n for n in os.listdir(tmp_path) if n.startswith(".out")]


# -- faults 4 and 8: over-long lines, before parsing, in linear time ---------------------------

def test_dev_zero_ends_with_one_too_long_letter():
    with time_limit(30):
        items = list(sources.read_items("/dev/zero"))
    assert [(i[0], i[2]) for i in items] == [("rejected", "too-long")]
    assert "without a line end" in items[0][3] and "not read" in items[0][3]


def test_a_line_without_end_stops_at_the_skip_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "MAX_LINE_SKIP", 5 << 20)
    (tmp_path / "RC.jsonl").write_bytes(GOOD + b"x" * (8 << 20) + b"\n" + GOOD)
    items = _kinds(tmp_path / "RC.jsonl")
    assert items == [("ok", None)] * 200 + [("rejected", "too-long")]  # the rest is not read


@pytest.mark.parametrize("split", ["one chunk", "across chunks"])
def test_an_over_long_line_is_a_letter_and_the_next_lines_are_read(tmp_path, monkeypatch, split):
    if split == "across chunks":
        monkeypatch.setattr(sources, "_CHUNK", 1 << 16)
    long = _line(999, "y" * (sources.MAX_LINE_BYTES + 10))
    (tmp_path / "RC.jsonl").write_bytes(GOOD + long + b"\n" + GOOD)
    items = list(sources.read_items(str(tmp_path / "RC.jsonl")))
    assert [i[0] for i in items] == ["ok"] * 200 + ["rejected"] + ["ok"] * 200
    letter = items[200]
    assert letter[1:3] == (201, "too-long") and letter[4] == "" and letter[5] == len(GOOD)
    assert f"a line of {len(long):,} bytes" in letter[3]
    assert items[201][1] == 202 and items[201][3] == len(GOOD) + len(long) + 1  # line numbers and offsets go on
    for parts in (2, 3):  # shared out to workers: the same items
        merged = sorted((i for p in range(parts) for i in sources.read_items(str(tmp_path / "RC.jsonl"), part=p, parts=parts)),
                        key=lambda i: i[1])
        assert merged == items
    assert list(sources.read_items(str(tmp_path / "RC.jsonl"), subreddits=("movies",))) == items


def _child(code: str, timeout: float = 120) -> dict:
    """Run ``code`` in a child Python; its last stdout line is JSON; ``maxrss_mb`` added."""
    peak = "int(next(x for x in open('/proc/self/status') if x.startswith('VmHWM')).split()[1]) // 1024"
    wrapped = code + f"\nprint(json.dumps(dict(OUT, maxrss_mb={peak})))"  # (ru_maxrss keeps the parent's peak)
    env = dict(os.environ, PYTHONPATH=REPO)
    done = subprocess.run([sys.executable, "-c", wrapped], capture_output=True, text=True, timeout=timeout, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _bomb(path, head: bytes, fill: bytes, repeat: int, tail: bytes, kind: str = "zst") -> None:
    with open(path, "wb") as fh:
        if kind == "gz":
            writer = gzip.GzipFile(fileobj=fh, mode="wb", compresslevel=9)
        else:
            writer = zstandard.ZstdCompressor(level=19).stream_writer(fh, closefd=False)
        writer.write(head)
        for _ in range(repeat):
            writer.write(fill)
        writer.write(tail)
        writer.close()


READ_IN_CHILD = """
import json, sys, collections, time
from lsdscc.corpus import sources
started = time.time()
counts = collections.Counter(i[0] if i[0] != "rejected" else i[2] for i in sources.read_items(sys.argv[1]))
OUT = {"counts": counts, "seconds": time.time() - started}
"""


@pytest.mark.parametrize("kind", ["zst", "gz"])
def test_a_decompression_bomb_line_is_a_letter_in_bounded_memory(tmp_path, kind):
    """A 200 MB line in a small .zst (the issue's 600 MB one crashed orjson) or .gz."""
    path = tmp_path / f"bomb.{kind}"
    _bomb(path, b'{"subreddit": "movies", "body": "', b"a" * (1 << 20), 200, b'"}\n' + _line(1) + b"\n", kind)
    assert path.stat().st_size < 300_000
    out = _child(READ_IN_CHILD.replace("sys.argv[1]", repr(str(path))))
    assert out["counts"] == {"too-long": 1, "ok": 1}
    assert out["maxrss_mb"] < 250, out  # the line is never held: one bounded decoder output at a time


def test_a_320_mb_plain_line_is_linear(tmp_path):
    """The old reader grew the line by concatenation (36-88 s at 320 MB); 64 MB here."""
    path = tmp_path / "RC.jsonl"
    with open(path, "wb") as fh:
        fh.write(b'{"body": "')
        for _ in range(64):
            fh.write(b"z" * (1 << 20))
        fh.write(b'"}\n' + _line(1) + b"\n")
    with time_limit(20):
        assert _kinds(path) == [("rejected", "too-long"), ("ok", None)]


# -- fault 9: JSON arrays are streamed -----------------------------------------------------------

def test_a_json_array_bomb_is_streamed_in_bounded_memory(tmp_path):
    """A 34 KB .zst inflating to a 320 MB array: item by item (the old reader peaked at 929 MB, now 41 MB)."""
    path = tmp_path / "array.json.zst"
    item = b'{"id": "x", "subreddit": "movies", "body": "' + b"hello " * 10_000 + b'", "link_id": "t3_s"},'
    _bomb(path, b"[", item * 100, 53, b'{"last": 1}]')
    assert path.stat().st_size < 300_000
    out = _child(READ_IN_CHILD.replace("sys.argv[1]", repr(str(path))), timeout=300)
    assert out["counts"] == {"ok": 5_301}
    assert out["maxrss_mb"] < 200, out


@pytest.mark.parametrize("case,expected", [
    (b'[{"a": 1}, {"b": 2} ,\n {"c": [3]}]', [("ok", None)] * 3),
    (b'[{"a": 1}, 5, "x", {"b": 2}]', [("ok", None), ("rejected", "not-object"), ("rejected", "not-object"), ("ok", None)]),
    (b'[{"a": 1}, {"b": nope}, {"c": 3}]', [("ok", None), ("rejected", "malformed-json")]),
    (b'[{"a": 1}, {"b": 2}', [("ok", None), ("ok", None), ("rejected", "malformed-json")]),  # cut: items kept
    (b'[{"a": 1} {"b": 2}]', [("ok", None), ("rejected", "malformed-json")]),
    (b'[{"a": 1}, ' + b"[" * 600 + b"]" * 600 + b', {"c": 3}]', [("ok", None), ("rejected", "too-deep"), ("ok", None)]),
    (b'[{"a": 1}, ' + b"[" * 5000 + b"]" * 5000 + b"]", [("ok", None), ("rejected", "too-deep")]),
    (b'[{"a": 1}, {"n": ' + b"9" * 5000 + b"}]", [("ok", None), ("rejected", "out-of-range")]),
    (b'[{"a": 1}, {"s": "\xff"}]', [("ok", None), ("rejected", "not-utf8")]),
    (b'[{"a": 1}, {"s": "x"}\xff]', [("ok", None), ("ok", None), ("rejected", "not-utf8")]),
    (b"[]", []),
    (b"[  \n", []),
])
def test_array_items_are_letters_one_by_one(tmp_path, case, expected):
    (tmp_path / "a.json").write_bytes(case)
    assert _kinds(tmp_path / "a.json") == expected


def test_an_over_long_array_item_and_numbers_cut_between_chunks(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "_CHUNK", 7)  # tiny reads: every item and number crosses a chunk end
    monkeypatch.setattr(sources, "_ARRAY_AHEAD", 3)
    (tmp_path / "a.json").write_bytes(b'[{"n": 123456789}, 1234567, true, {"s": "' + "é".encode() * 20 + b'"}]')
    items = list(sources.read_items(str(tmp_path / "a.json")))
    assert items[0][2] == {"n": 123456789} and items[3][2] == {"s": "é" * 20}
    assert [i[2] for i in items[1:3]] == ["not-object", "not-object"]
    monkeypatch.setattr(sources, "_CHUNK", 1 << 16)
    big = b'[{"a": 1}, {"s": "' + b"q" * (sources.MAX_LINE_BYTES + 5) + b'"}, {"b": 2}]'
    (tmp_path / "a.json").write_bytes(big)
    assert _kinds(tmp_path / "a.json") == [("ok", None), ("rejected", "too-long"), ("ok", None)]  # ended in a chunk
    monkeypatch.setattr(sources, "_CHUNK", 1 << 14)
    big = b'[{"a": 1}, {"s": "' + b"q" * (sources.MAX_LINE_BYTES * 3) + b'"}, {"b": 2}]'
    (tmp_path / "a.json").write_bytes(big)
    assert _kinds(tmp_path / "a.json") == [("ok", None), ("rejected", "too-long")]  # no end in sight: stops


# -- fault 10 and 24: DailyDialog release zips ---------------------------------------------------

def _split_zip(split: str, files: dict | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name in (f"dialogues_{split}.txt", f"dialogues_act_{split}.txt", f"dialogues_emotion_{split}.txt"):
            data = (files or {}).get(name)
            if data is None:
                data = open(os.path.join(SAMPLE_DD, split, name), "rb").read()
            z.writestr(f"{split}/{name}", data)
    return buf.getvalue()


def _release(path, splits: dict) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for split, data in splits.items():
            z.writestr(f"ijcnlp_dailydialog/{split}.zip", data)


def test_a_zip_bomb_release_is_one_line_not_a_memory_error(tmp_path):
    bomb = b"\n" * (zipped.MAX_MEMBER_BYTES + 1)  # deflates about 1000:1
    release = tmp_path / "ijcnlp_dailydialog.zip"
    _release(release, {"train": _split_zip("train", {"dialogues_train.txt": bomb}), "test": _split_zip("test")})
    assert release.stat().st_size < 200_000
    with time_limit(60), pytest.raises(UserError) as caught:
        readers.read_dailydialog(str(release))
    message = str(caught.value)
    assert "\n" not in message and "train/dialogues_train.txt" in message
    assert f"declares {len(bomb):,} bytes" in message and "not read" in message


def test_a_member_whose_header_lies_about_its_size_is_one_line(tmp_path):
    data = bytearray(_split_zip("test"))
    name = b"test/dialogues_test.txt"
    at = data.rfind(b"PK\x01\x02", 0, data.find(name, data.find(b"PK\x01\x02")) + 1)  # its central entry
    data[at + 24:at + 28] = (10).to_bytes(4, "little")  # uncompressed size: 10 bytes
    release = tmp_path / "ijcnlp_dailydialog.zip"
    _release(release, {"test": bytes(data)})
    with pytest.raises(UserError) as caught:
        readers.read_dailydialog(str(release))
    assert "\n" not in str(caught.value) and "dialogues_test.txt" in str(caught.value)


@pytest.mark.parametrize("layout", ["release zip", "unzipped folder"])
def test_a_release_under_a_path_with_an_exclamation_mark_reads(tmp_path, layout):
    root = tmp_path / "data!v2" / "dd!"
    root.mkdir(parents=True)
    splits = {s: _split_zip(s) for s in ("train", "validation", "test")}
    if layout == "release zip":
        path = root / "ijcnlp_dailydialog.zip"
        _release(path, splits)
    else:
        path = root / "ijcnlp_dailydialog"
        path.mkdir()
        for split, data in splits.items():
            (path / f"{split}.zip").write_bytes(data)
    got = [(r.line, r.text, r.extra) for r in readers.read_dailydialog(str(path))]
    assert got == [(r.line, r.text, r.extra) for r in readers.read_dailydialog(SAMPLE_DD)] and got
    readers.check_dailydialog_shape(str(path))


def test_split_path_finds_the_file_on_disk(tmp_path):
    folder = tmp_path / "a!b"
    folder.mkdir()
    (folder / "r.zip").write_bytes(b"")
    (folder / "plain!name.txt").write_text("x")
    assert zipped.split_path(f"{folder}/r.zip!x/t.zip!t/d.txt") == [f"{folder}/r.zip", "x/t.zip", "t/d.txt"]
    assert zipped.split_path(f"{folder}/plain!name.txt") == [f"{folder}/plain!name.txt"]


# -- fault 7: a dialogue of 20,000 turns -------------------------------------------------------

@pytest.mark.parametrize("turns", [readers.MAX_TURNS + 1, 12_000, 20_000])
def test_a_dialogue_of_thousands_of_turns_is_a_counted_letter(turns):
    line = " __eou__ ".join(f"turn {i}" for i in range(turns)) + " __eou__"
    raw = readers.RawLine("d.txt", 1, line, "dailydialog", ("train", 0, " ".join(["1"] * turns), " ".join(["0"] * turns)))
    with time_limit(5), pytest.raises(readers.RejectedRecord) as caught:
        readers.parse_dialogue(raw)
    assert caught.value.reason == "too-many-turns" and f"{turns:,} utterances" in caught.value.detail
    record = {"dialogue": [{"text": "t", "responses": ["r"]}] * turns}
    raw = readers.RawLine("m.json", 1, json.dumps(record), "multiref")
    with pytest.raises(readers.RejectedRecord, match="utterances, over"):
        readers.parse_multiref(raw, 0)


def test_a_line_of_hundreds_of_megabytes_is_one_line_naming_it(tmp_path, monkeypatch):
    monkeypatch.setattr(readers, "MAX_LINE_BYTES", 1 << 20)
    (tmp_path / "test").mkdir()
    for kind in ("", "act_", "emotion_"):
        name = f"dialogues_{kind}test.txt"
        data = open(os.path.join(SAMPLE_DD, "test", name), "rb").read()
        (tmp_path / "test" / name).write_bytes(data + (b"x" * (3 << 20) + b"\n" if not kind else b""))
    lines = open(os.path.join(SAMPLE_DD, "test", "dialogues_test.txt"), "rb").read().count(b"\n")
    with time_limit(10), pytest.raises(UserError, match=rf"dialogues_test\.txt:{lines + 1}: a line of over 1,048,576 bytes"):
        readers.read_dailydialog(str(tmp_path))


def test_the_longest_allowed_dialogue_still_parses():
    turns = readers.MAX_TURNS
    line = " __eou__ ".join(f"t{i}" for i in range(turns)) + " __eou__"
    raw = readers.RawLine("d.txt", 1, line, "dailydialog", ("train", 0, " ".join(["1"] * turns), " ".join(["0"] * turns)))
    assert len(readers.parse_dialogue(raw).turns) == turns


def test_the_dailydialog_build_counts_the_long_dialogue(tmp_path):
    root = tmp_path / "dd"
    for split in ("train", "validation", "test"):
        (root / split).mkdir(parents=True)
        for kind in ("", "act_", "emotion_"):
            name = f"dialogues_{kind}{split}.txt"
            data = open(os.path.join(SAMPLE_DD, split, name), "rb").read()
            if split == "train":
                extra = {"": " __eou__ ".join(f"turn {i}" for i in range(15_000)) + " __eou__",
                         "act_": " ".join(["1"] * 15_000), "emotion_": " ".join(["0"] * 15_000)}[kind]
                data += extra.encode() + b"\n"
            (root / split / name).write_bytes(data)
    done = _cli("dailydialog", "build", "--dailydialog", str(root), "--output", str(tmp_path / "out"), timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    letters = [json.loads(x) for x in open(tmp_path / "out" / "rejected" / "too-many-turns.jsonl")]
    assert len(letters) == 1 and letters[0]["reason"] == "too-many-turns"


# -- faults 5 and 22: --verify-hashes reads each file once, keyed by its whole path ----------------

def test_hashes_are_keyed_by_the_whole_listed_path(tmp_path):
    for folder, body in (("a", b"1"), ("b", b"2")):
        (tmp_path / "in" / folder).mkdir(parents=True)
        (tmp_path / "in" / folder / "RC.jsonl").write_bytes(body)
    digest = {f: hashlib.sha256(b).hexdigest() for f, b in (("a", b"1"), ("b", b"2"))}
    hashes = tmp_path / "in" / "hashes.txt"
    hashes.write_text(f"{digest['a']}  ./a/RC.jsonl\n{digest['b']} *b/RC.jsonl\n{'0' * 64}  RC.jsonl\n")
    listed = provenance.check_listed([str(tmp_path / "in" / "a" / "RC.jsonl"), str(tmp_path / "in" / "b" / "RC.jsonl")],
                                     str(hashes))
    assert provenance.listed_digest(str(tmp_path / "in" / "a" / "RC.jsonl"), listed) == digest["a"]
    assert provenance.listed_digest(str(tmp_path / "in" / "b" / "RC.jsonl"), listed) == digest["b"]
    assert provenance.listed_digest(str(tmp_path / "c" / "RC.jsonl"), listed) == "0" * 64  # the bare name
    assert provenance.listed_digest("gs://bucket/x/b/RC.jsonl", listed) == digest["b"]
    assert provenance.listed_digest(str(tmp_path / "RS.jsonl"), listed) is None


def _cli(*args, timeout=300):
    env = dict(os.environ, PYTHONPATH=REPO)
    return subprocess.run([sys.executable, "-m", "multiref_cli", *args], capture_output=True, text=True,
                          cwd=REPO, env=env, timeout=timeout)


def _feed(fifo, data: bytes) -> threading.Thread:
    def write():
        with open(fifo, "wb") as fh:
            fh.write(data)
    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def test_verify_hashes_over_a_fifo_and_two_inputs_of_one_name(tmp_path):
    """One build: a FIFO (hashed while it is read, once), a/RC.jsonl and b/RC.jsonl (each its
    own line of hashes.txt), a 19 KB .zst holding a 200 MB line and a JSON array; then the same
    with the two same-named files' digests swapped: one line naming b/RC.jsonl, nothing published."""
    from lsdscc.corpus.sample_gen import generate

    submissions, comments = generate(30, seed=3)
    records = [json.dumps(r).encode() for r in submissions + comments]
    third = len(records) // 3
    files = {"a/RC.jsonl": b"\n".join(records[:third]) + b"\n", "b/RC.jsonl": b"\n".join(records[third:2 * third]) + b"\n"}
    fifo_data = b"\n".join(records[2 * third:]) + b"\n"
    for name, data in files.items():
        (tmp_path / "in" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "in" / name).write_bytes(data)
    _bomb(tmp_path / "in" / "bomb.zst", b'{"subreddit": "movies", "body": "', b"a" * (1 << 20), 200, b'"}\n')
    files["bomb.zst"] = (tmp_path / "in" / "bomb.zst").read_bytes()
    (tmp_path / "in" / "array.json").write_bytes(b"[" + b",".join(records[:5]) + b"]")
    files["array.json"] = (tmp_path / "in" / "array.json").read_bytes()
    fifo = tmp_path / "in" / "stream.jsonl"
    os.mkfifo(fifo)
    lines = [f"{hashlib.sha256(d).hexdigest()}  {n}\n" for n, d in files.items()]
    lines.append(f"{hashlib.sha256(fifo_data).hexdigest()}  stream.jsonl\n")
    (tmp_path / "hashes.txt").write_text("".join(lines))
    inputs = [a for n in [*files, "stream.jsonl"] for a in ("--input", str(tmp_path / "in" / n))]
    writer = _feed(fifo, fifo_data)
    done = _cli("lsdscc", "build", "--skip-testset", *inputs, "--output", str(tmp_path / "out"),
                "--verify-hashes", str(tmp_path / "hashes.txt"), "--quiet", "--validation-fraction", "0")
    writer.join(5)
    assert done.returncode == 0, done.stderr[-3000:]
    stats = json.loads((tmp_path / "out" / "stats.json").read_text())
    assert stats["counts"]["rejected-too-long"] == 1 and stats["counts"]["posts-kept-comments"] > 0
    assert sorted(f["sha256"] for f in stats["files"]) == sorted(
        hashlib.sha256(d).hexdigest() for d in [*files.values(), fifo_data])
    assert not any("hash_problem" in f for f in stats["files"])

    swapped = [lines[1].split()[0] + "  a/RC.jsonl\n", lines[0].split()[0] + "  b/RC.jsonl\n", *lines[2:]]
    (tmp_path / "hashes.txt").write_text("".join(swapped))
    writer = _feed(fifo, fifo_data)
    done = _cli("lsdscc", "build", "--skip-testset", *inputs, "--output", str(tmp_path / "out2"),
                "--verify-hashes", str(tmp_path / "hashes.txt"), "--quiet")
    writer.join(5)
    errors = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(errors) == 1, done.stderr[-3000:]
    assert f"{tmp_path / 'in' / 'a' / 'RC.jsonl'}: SHA-256" in errors[0] and "does not match" in errors[0]
    assert "(and 1 more file(s))" in errors[0]
    assert not (tmp_path / "out2").exists()
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".out2")]  # no lock, no staging left
