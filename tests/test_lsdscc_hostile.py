"""Hostile dumps never hang, abort or leak (issue 17, items 2, 3 and 5).

- Threads are trees whatever the input says: parent cycles and self-parents become
  ``parent-cycle`` dead letters, replies below them ``dropped-below-parent-cycle``; random
  parent graphs (hypothesis, derandomized) always finish with acyclic chains only.
- A file the decoder refuses part way (gzip CRC, corrupt deflate, zstd garbage, an unreadable
  member) ends with one ``corrupt-file`` letter; the lines before it are kept.
- A line that nests too deep, a number out of range, a NaN/inf timestamp or a lone surrogate
  is a dead letter with its reason, never an exception.
- Published dead letters carry the file's name (not its path), line, byte offset, reason and
  a redacted excerpt: no author/flair field, no u/name mention, no e-mail.

The per-element tests run the job's own DoFn (``ReadPosts``) and thread functions; one real
``multiref lsdscc build`` (a subprocess) puts every case together.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import signal
import subprocess
import sys
from collections import Counter

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsdscc.corpus import sources
from lsdscc.corpus.config import CorpusConfig
from lsdscc.corpus.outcomes import Dropped, Kept
from lsdscc.corpus.records import Post
from lsdscc.corpus.threads import prepare_thread, thread_examples
from lsdscc.corpus.vocab import build_vocabulary
from lsdscc.corpus.records import dead_letter
from pipelines.lsdscc.transforms import REJECTED, ReadPosts

CONFIG = CorpusConfig(min_turns=2, max_query_tokens=10**6, max_response_tokens=10**6)

# what a published dead letter must never hold
MENTION = re.compile(r"(?<![A-Za-z0-9])/?u(?:ser)?\\?/[A-Za-z0-9_-]+", re.I)
EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
PRIVATE_KEY = re.compile(r'"[^"]*(?:author|flair)[^"]*"\s*:', re.I)


@contextlib.contextmanager
def time_limit(seconds: float):
    """Raise TimeoutError in this thread when the block runs longer than ``seconds`` (so an
    endless loop fails the test instead of hanging the run)."""
    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _vocab(nodes):
    counts = Counter(t for n in nodes for t in n.text.split())
    return build_vocabulary(counts, vocab_size=10**6, rare_max_count=0, piece_min_count=1, min_split_length=99)


def _examples(thread_id, posts, seconds=20):
    """prepare_thread and thread_examples under a time limit -> (nodes, counts, examples)."""
    with time_limit(seconds):
        nodes, counts = prepare_thread(thread_id, posts, CONFIG)
        out = list(thread_examples(thread_id, nodes, _vocab(nodes), CONFIG))
    return nodes, counts, out


def _comment(cid, parent, text="a reply"):
    return Post("t1", cid, "t3_s", parent, 1500000000, text)


SUBMISSION = Post("t3", "t3_s", "t3_s", "", 1500000000, "best movie ever")


# --- threads are trees ----------------------------------------------------------------------
def test_cycles_and_self_parents_are_taken_out_the_rest_is_kept():
    posts = [
        SUBMISSION,
        _comment("t1_a", "t3_s", "inception"), _comment("t1_a2", "t1_a", "agreed totally"),
        _comment("t1_b", "t1_c", "loop one"), _comment("t1_c", "t1_b", "loop two"),  # naming each other
        _comment("t1_d", "t1_b", "reply to the loop"),
        _comment("t1_e", "t1_e", "my own parent"), _comment("t1_f", "t1_e", "reply to it"),
        _comment("t1_g", "t1_f", "and below"),
    ]
    nodes, counts, out = _examples("t3_s", posts)
    assert [n.id for n in nodes] == ["t1_a", "t1_a2", "t3_s"]
    assert counts["rejected-parent-cycle"] == 3 and counts["dropped-below-parent-cycle"] == 3
    convs = [o.value.comment_ids for o in out if isinstance(o, Kept) and o.value.config == "multi_turn"]
    assert convs == [["t3_s", "t1_a", "t1_a2"]]
    assert {o.value.id for o in out if isinstance(o, Kept) and o.value.config == "single_turn"} == {"t1_a", "t1_a2"}


def test_a_10k_deep_chain_and_a_10k_long_cycle_finish_quickly():
    chain = [SUBMISSION] + [_comment(f"t1_c{i}", "t3_s" if i == 0 else f"t1_c{i - 1}", f"turn {i}") for i in range(10_000)]
    loop = [_comment(f"t1_l{i}", f"t1_l{(i + 1) % 10_000}", "loop") for i in range(10_000)]
    replies = [_comment(f"t1_r{i}", f"t1_l{i * 7}", "below") for i in range(1000)]
    nodes, counts, out = _examples("t3_s", chain + loop + replies, seconds=60)
    assert len(nodes) == 10_001
    assert counts["rejected-parent-cycle"] == 10_000 and counts["dropped-below-parent-cycle"] == 1000
    (conv,) = [o.value for o in out if isinstance(o, Kept) and o.value.config == "multi_turn"]
    assert len(conv.comment_ids) == 10_001 and conv.comment_ids[-1] == "t1_c9999"


def _on_cycle(parents: dict, node: str) -> bool:
    seen, current = 0, parents.get(node)
    while current in parents and seen <= len(parents):
        if current == node:
            return True
        current, seen = parents[current], seen + 1
    return False


@st.composite
def parent_graphs(draw):
    """Comments of one thread whose parents are the submission, other comments (so cycles and
    self-loops happen), missing ids or a long chain; sometimes without the submission."""
    n = draw(st.integers(1, 30))
    ids = [f"t1_c{i}" for i in range(n)]
    targets = st.sampled_from(ids + ["t3_s", "t1_gone", "t3_other"])
    parents = [draw(targets) for _ in ids]
    posts = [_comment(i, p, f"text {k}") for k, (i, p) in enumerate(zip(ids, parents))]
    if draw(st.booleans()):
        depth = draw(st.sampled_from([1, 50, 2000]))
        top = draw(st.sampled_from(ids + ["t3_s"]))
        posts += [_comment(f"t1_d{j}", top if j == 0 else f"t1_d{j - 1}", "deep") for j in range(depth)]
    if draw(st.booleans()):
        posts.append(SUBMISSION)
    return posts


@settings(derandomize=True, max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parent_graphs())
def test_random_parent_graphs_always_finish_as_trees(posts):
    nodes, counts, out = _examples("t3_s", posts, seconds=30)
    parents = {p.id: p.parent_id for p in posts}
    on_cycle = {i for i in parents if _on_cycle(parents, i)}
    kept = {n.id for n in nodes}
    assert not kept & on_cycle
    assert counts["rejected-parent-cycle"] == len(on_cycle)
    assert len(kept) + len(on_cycle) + counts["dropped-below-parent-cycle"] == len(parents)
    by_id = {n.id: n for n in nodes}
    for node in nodes:  # every kept chain ends (at the root or a missing parent) within len(kept) steps
        current, steps = node, 0
        while current.parent_id in by_id:
            current, steps = by_id[current.parent_id], steps + 1
            assert steps <= len(kept)
    for outcome in out:
        if isinstance(outcome, Kept) and outcome.value.config == "multi_turn":
            ids = outcome.value.comment_ids
            assert ids[0] == "t3_s" and len(set(ids)) == len(ids)
            assert all(by_id[child].parent_id == parent for parent, child in zip(ids, ids[1:]))


# --- the job's reader, per element ----------------------------------------------------------
def read_file(path, config=CorpusConfig()):
    """What the job's ReadPosts DoFn makes of one file: (kept posts, letters, counts)."""
    dofn = ReadPosts(config)
    dofn.setup()
    dofn.start_bundle()
    posts, letters = [], []
    for out in dofn.process(str(path)):
        tag = getattr(out, "tag", None)
        if tag == REJECTED:
            letters.append(out.value)
        elif tag is None:  # other tagged outputs (the file's digest, the schema tallies) are not posts
            posts.append(out)
    return posts, letters, dofn.tally


def _line(cid="c1", body="a fine reply", created=1500000000, **extra):
    record = {"id": cid, "body": body, "author": "secret_author", "parent_id": "t3_s", "link_id": "t3_s",
              "subreddit": "movies", "created_utc": created, **extra}
    return json.dumps(record).encode()


GOOD = b"".join(_line(f"g{i}") + b"\n" for i in range(2000))


def _gzip_bad_crc():
    blob = bytearray(gzip.compress(GOOD))
    blob[-8] ^= 0xFF  # the CRC32 of the member
    return gzip.compress(GOOD) + bytes(blob)


def _gzip_bad_deflate():
    blob = bytearray(gzip.compress(GOOD, 1))
    blob[len(blob) // 2: len(blob) // 2 + 8] = b"\xff" * 8
    return gzip.compress(GOOD) + bytes(blob)


CORRUPT = {
    "gzip-bad-crc": _gzip_bad_crc,
    "gzip-bad-deflate": _gzip_bad_deflate,
    "gzip-unreadable-member": lambda: gzip.compress(GOOD) + b"\x1f\x8b\x08\xe0" + b"\x00" * 40,
    "zstd-magic-then-garbage": lambda: sources.ZSTD_MAGIC + bytes(range(256)) * 4,
    "zstd-good-frame-then-garbage": lambda: zstandard.ZstdCompressor().compress(GOOD) + sources.ZSTD_MAGIC + b"\x00\xff" * 300,
}


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_a_corrupt_file_ends_with_a_corrupt_file_letter_keeping_the_lines_before(tmp_path, case):
    path = tmp_path / f"RC_{case}.bin"
    path.write_bytes(CORRUPT[case]())
    with time_limit(60):
        posts, letters, counts = read_file(path)
    (letter,) = letters
    assert letter["reason"] == "corrupt-file" and counts["rejected-corrupt-file"] == 1
    assert letter["file"] == path.name and str(tmp_path) not in json.dumps(letter)
    kept_bytes = sum(len(line) + 1 for line in (GOOD * 3).split(b"\n")[: len(posts)])
    assert letter["line"] == len(posts) and letter["offset"] == kept_bytes
    assert ("zstd" in case) == ("ZstdError" in letter["detail"])
    if case != "zstd-magic-then-garbage":
        assert len(posts) >= 2000  # the first member / frame is kept whole


HOSTILE_LINES = {
    "nested-100k-objects": (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "too-deep"),
    "nested-100k-arrays": (b"[" * 100_000 + b"]" * 100_000, "too-deep"),
    "nested-100k-in-a-record": (_line()[:-1] + b', "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "too-deep"),
    "created-inf-string": (_line(created="inf"), "out-of-range"),
    "created-nan-string": (_line(created="nan"), "out-of-range"),
    "created-NaN-literal": (_line(created=0).replace(b'"created_utc": 0', b'"created_utc": NaN'), "out-of-range"),
    "created-Infinity-literal": (_line(created=0).replace(b'"created_utc": 0', b'"created_utc": -Infinity'), "out-of-range"),
    "created-1e400-string": (_line(created="1e400"), "out-of-range"),
    "created-23-digits": (_line(created=10**22), "out-of-range"),
    "created-1e300": (_line(created=1e300), "out-of-range"),
    "created-negative": (_line(created=-5), "out-of-range"),
    "created-milliseconds": (_line(created=1500000000000), "out-of-range"),
    "integer-of-5000-digits": (_line()[:-1] + b', "score": ' + b"9" * 5000 + b"}", "out-of-range"),
    "lone-surrogate-body": (_line(body="x").replace(b'"x"', b'"caf\\ud800"'), "not-utf8"),
    "body-of-1m-characters": (_line(body=" *a" * 350_000), "too-long"),  # cleaning it took hours
}


@pytest.mark.parametrize("case", sorted(HOSTILE_LINES))
def test_a_hostile_line_is_a_dead_letter_with_its_reason(tmp_path, case):
    raw, reason = HOSTILE_LINES[case]
    path = tmp_path / "RC_hostile.jsonl"
    path.write_bytes(_line("before") + b"\n" + raw + b"\n" + _line("after") + b"\n")
    with time_limit(30):
        posts, letters, counts = read_file(path)
    assert [p[1][1] for p in posts] == ["t1_before", "t1_after"]
    assert [(x["reason"], x["line"]) for x in letters] == [(reason, 2)]
    assert counts[f"rejected-{reason}"] == 1 and letters[0]["offset"] == len(_line("before")) + 1


# --- dead letters safe to publish -----------------------------------------------------------
PRIVATE_LINE = ('{"author": "secret_author", "author_fullname": "t2_secret", "author_flair_text": "secret flair", '
                '"author_flair_richtext": [{"e": "text", "t": "secret rich"}], "link_flair_text": "secret link", '
                '"body": "ask u/secret_user or /u/Other_Secret, mail secret.person@example.com", "id": ')


def _assert_publishable(letter, local_dir):
    text = json.dumps(letter, ensure_ascii=False)
    assert "secret" not in text.lower(), text  # every private value in these inputs says "secret"
    assert not MENTION.search(letter["text"]) and not EMAIL.search(text) and not PRIVATE_KEY.search(letter["text"])
    assert str(local_dir) not in text and "/" not in (letter["file"] or "")
    assert {"reason", "file", "line", "offset", "detail", "text"} <= set(letter)


@pytest.mark.parametrize("parsed", [False, True], ids=["unparsed-line", "parsed-record"])
def test_dead_letters_carry_no_author_mention_email_or_local_path(tmp_path, parsed):
    tail = '"c1", "subreddit": "movies", "created_utc": "yesterday"}' if parsed else '"c1", "subreddit": "movies"'
    path = tmp_path / "private" / "RC_private.jsonl"
    path.parent.mkdir()
    path.write_text(PRIVATE_LINE + tail + "\n")
    _, letters, _ = read_file(path)
    (letter,) = letters
    assert letter["reason"] == ("wrong-type" if parsed else "malformed-json")
    assert letter["file"] == "RC_private.jsonl" and letter["line"] == 1 and letter["offset"] == 0
    _assert_publishable(letter, tmp_path)
    if parsed:  # the excerpt still says which keys were there, but no post's text (deletion wins)
        assert letter["text"] == '{"body": "…", "created_utc": "…", "id": "c1", "subreddit": "movies"}'
    else:
        assert letter["text"].startswith('{"…": "…", "…": "…"') and '"body": "…"' in letter["text"]


def test_a_truncated_file_letter_names_the_file_not_its_folder(tmp_path):
    blob = zstandard.ZstdCompressor(level=1).compress(GOOD * 5)
    path = tmp_path / "RC_cut.zst"
    path.write_bytes(blob[: len(blob) // 2])
    letter = dead_letter(str(path), 3, "truncated-file", f"{path}: compressed stream ends early", "", 17)
    assert letter["detail"] == "RC_cut.zst: compressed stream ends early" and letter["file"] == "RC_cut.zst"
    _, letters, _ = read_file(path)
    assert letters[-1]["reason"] == "truncated-file" and str(tmp_path) not in json.dumps(letters)


# --- one real build with every case ---------------------------------------------------------
def _hostile_inputs(folder):
    folder.mkdir()
    sub = {"id": "s1", "title": "Best movie of the year?", "selftext": "", "author": "secret_author",
           "subreddit": "movies", "created_utc": 1500000000}
    lines = [json.dumps(sub).encode()]
    for i in range(30):  # a normal thread: pairs and conversations
        parent = "t3_s1" if i < 10 else f"t1_n{i - 10}"
        lines.append(json.dumps({"id": f"n{i}", "body": f"reply number {i} about the movie", "author": "x",
                                 "parent_id": parent, "link_id": "t3_s1", "subreddit": "movies",
                                 "created_utc": 1500000001 + i}).encode())
    cyclic = [("a", "t1_b"), ("b", "t1_a"), ("r1", "t1_a"), ("self", "t1_self"), ("r2", "t1_self"), ("r3", "t1_r2")]
    for cid, parent in cyclic:  # the old hang: two comments naming each other, a self-parent, replies
        lines.append(json.dumps({"id": cid, "body": f"loop {cid} ask u/secret_user", "author": "x",
                                 "parent_id": parent, "link_id": "t3_s1", "subreddit": "movies",
                                 "created_utc": 1500000100}).encode())
    for cid, body in [("m1", "thanks u/SecretUserGamma, _u/secret_italic_ and **/User/Secret_Bold**!"),
                      ("m2", "[ Removed by Reddit ]")]:  # issue 35: usernames in any form, a marker of 2023
        lines.append(json.dumps({"id": cid, "body": body, "author": "x", "parent_id": "t1_n0", "link_id": "t3_s1",
                                 "subreddit": "movies", "created_utc": 1500000200}).encode())
    lines += [raw for raw, _ in HOSTILE_LINES.values()]
    lines.append((PRIVATE_LINE + '"c9", "subreddit": "movies"').encode())
    (folder / "RC_hostile.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    for case in ("gzip-bad-crc", "zstd-good-frame-then-garbage"):
        (folder / f"RC_{case}.{'gz' if 'gzip' in case else 'zst'}").write_bytes(CORRUPT[case]())


@pytest.fixture(scope="module")
def hostile_build(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    _hostile_inputs(root / "in")
    out = root / "out"
    done = subprocess.run([sys.executable, "-m", "multiref_cli", "lsdscc", "build", "--skip-testset", "--input",
                           str(root / "in"), "--output", str(out), "--validation-fraction", "0"],
                          capture_output=True, text=True, timeout=300, env={**os.environ, "MULTIREF_DEBUG": ""})
    return root, out, done


def test_the_hostile_build_finishes_with_exit_0_and_loads(hostile_build, tmp_path):
    import datasets

    root, out, done = hostile_build
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert "2 input file(s) could not be decoded to the end" in done.stderr
    rows = datasets.load_dataset(str(out), "single_turn", cache_dir=str(tmp_path / "hf"))["train"]
    assert rows.num_rows > 0 and not {"t1_a", "t1_b", "t1_self", "t1_r1", "t1_r2", "t1_r3"} & set(rows["id"])
    assert "t1_m1" in rows["id"] and "t1_m2" not in rows["id"]  # the marker is not a response
    assert not [r for r in rows if "secret" in r["response"] + r["query"]]  # no username in any form


def test_the_hostile_build_counts_every_case(hostile_build):
    _, out, done = hostile_build
    assert done.returncode == 0, done.stderr[-3000:]
    counts = json.loads((out / "stats.json").read_text())["counts"]
    expected = Counter(reason for _, reason in HOSTILE_LINES.values())
    expected.update({"parent-cycle": 3, "corrupt-file": 2, "malformed-json": 1})
    assert {k[len("rejected-"):]: v for k, v in counts.items() if k.startswith("rejected-")} == expected
    assert counts["dropped-below-parent-cycle"] == 3
    letters = [json.loads(line) for line in (out / "rejected" / "rejected.jsonl").read_text().splitlines()]
    assert Counter(x["reason"] for x in letters) == expected
    cycle = [x for x in letters if x["reason"] == "parent-cycle"]
    assert sorted(x["detail"].split()[0] for x in cycle) == ["t1_a", "t1_b", "t1_self"]


def test_the_published_dead_letters_are_redacted(hostile_build):
    root, out, done = hostile_build
    assert done.returncode == 0, done.stderr[-3000:]
    published = (out / "rejected" / "rejected.jsonl").read_text()
    assert str(root) not in published and "secret" not in published.lower()
    for line in published.splitlines():
        _assert_publishable(json.loads(line), root)


def _limit_memory():  # on the old code the loop grows a list without end: stop it at 8 GB
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (8 << 30, 8 << 30))


def test_the_old_hang_case_finishes_in_a_real_build(tmp_path):
    # Before: two comments naming each other plus a reply looped until MemoryError, and a
    # self-parent with a reply never finished. Only these records and a normal thread here.
    rows = [{"id": "s1", "title": "Best movie?", "selftext": "", "subreddit": "movies", "created_utc": 1500000000}]
    for cid, parent in [("ok1", "t3_s1"), ("ok2", "t1_ok1"), ("a", "t1_b"), ("b", "t1_a"), ("r1", "t1_a"),
                        ("self", "t1_self"), ("r2", "t1_self")]:
        rows.append({"id": cid, "body": f"comment {cid}", "parent_id": parent, "link_id": "t3_s1",
                     "subreddit": "movies", "created_utc": 1500000001})
    (tmp_path / "RC_loop.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "multiref_cli", "lsdscc", "build", "--skip-testset", "--input",
                           str(tmp_path / "RC_loop.jsonl"), "--output", str(out), "--validation-fraction", "0"],
                          capture_output=True, text=True, timeout=180, preexec_fn=_limit_memory)
    assert done.returncode == 0, done.stderr[-2000:]
    counts = json.loads((out / "stats.json").read_text())["counts"]
    assert counts["rejected-parent-cycle"] == 3 and counts["dropped-below-parent-cycle"] == 2
    assert "rejected: 3 " in done.stdout
