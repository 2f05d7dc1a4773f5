"""The dump fuzz tier (issue 17, item 8): seeded, bounded, run in CI.

A hand-rolled mutator (``random.Random`` with fixed seeds: the same cases on every run) turns
real-shaped dump records (:func:`lsdscc.corpus.sample_gen.generate`, the generator of the bundled
sample) into hostile lines: flipped, inserted, deleted and repeated bytes, cut lines, values
of the wrong type, NaN/inf/huge/negative numbers, deep nesting, lone surrogates, mangled ids
and parent ids (self-parents, loops, other threads), and gzip/zstd frames with flipped,
cut or appended bytes, and archives with zstd skippable frames (as ``pzstd`` and seekable zstd write
them) and decompression bombs (over-long lines, a line that never ends), mutated or not. Each case goes through the code the job runs per element: the
``ReadPosts`` DoFn (``read_items`` then ``normalize``), thread resolution, cleaning and
examples. No exception may escape, nothing may hang (a time limit per batch), and every
line must be accounted for: kept, dropped with a counter, or a counted dead letter whose
text is publishable. A few real ``multiref lsdscc build`` runs on files full of mutants
close the tier. Case counts: :data:`LINE_CASES`, :data:`FRAME_CASES`, :data:`ARCHIVE_CASES`, :data:`BUILD_CASES`.
Privacy (issue 35): :data:`NAME_CASES` texts with a username in random markup, entities and
escapes, none of which survives cleaning; :data:`DELETION_CASES` random threads of copies and
tombstones, resolved alike in every order with no deleted post's text left.
"""

from __future__ import annotations

import gzip
import json
import random
import re
import subprocess
import sys
from collections import Counter, defaultdict

import pytest
import zstandard

from lsdscc.corpus import sources, threads
from lsdscc.corpus.config import CorpusConfig
from lsdscc.corpus.outcomes import Dropped, Kept
from lsdscc.corpus.records import DELETED, TITLE_ONLY, Post
from lsdscc.corpus.sample_gen import generate
from lsdscc.corpus.vocab import build_vocabulary
from pipelines.lsdscc.transforms import REJECTED, ReadPosts
from tests.test_lsdscc_hostile import EMAIL, MENTION, PRIVATE_KEY, time_limit

CONFIG = CorpusConfig()
LINE_SEEDS = range(20)  # 20 batches of LINES_PER_SEED mutated lines
LINES_PER_SEED = 1500
LINE_CASES = len(LINE_SEEDS) * LINES_PER_SEED  # 30,000
FRAME_SEEDS = range(4)
FRAMES_PER_SEED = 300
FRAME_CASES = len(FRAME_SEEDS) * FRAMES_PER_SEED  # 1,200
ARCHIVE_SEEDS = range(3)
ARCHIVES_PER_SEED = 80
ARCHIVE_CASES = len(ARCHIVE_SEEDS) * ARCHIVES_PER_SEED  # 240
BUILD_LINES = 3000
BUILD_FRAMES = 40
BUILD_ARCHIVES = 12
BUILD_CASES = BUILD_LINES + BUILD_FRAMES + BUILD_ARCHIVES  # in one real build
SAMPLE_USER = re.compile(r"(?<![A-Za-z0-9])user\d+")


def _records(seed: int) -> list[dict]:
    submissions, comments = generate(12, seed=seed)
    return submissions + comments


_ODD_VALUES = [None, True, False, 0, -1, 2**63, 10**22, -(10**30), 1e300, -0.0, "", "x" * 5000, [], {}, [[[]]],
               {"data": {}}, "inf", "nan", "1e400", "t1_", "t3_", "t1_t1_x", "\u0000", "\ud800", "u/someone",
               "someone@example.com", "[deleted]", "\u202e\u200b", "\U0001F600" * 50,
               "[ Removed by Reddit ]", "_u/someone_", "**/User/SomeOne**", "ask U\\/someone", "moderator"]
_NUMBERS = [b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1e999", b"9" * 30, b"9" * 5000, b"-0", b"1.5e-400"]


def _mutate_record(rng: random.Random, record: dict, ids: list) -> bytes:
    """A structural mutant: fields of the wrong type, odd numbers, nesting, odd parents."""
    record = dict(record)
    for _ in range(rng.randint(1, 3)):
        roll = rng.random()
        key = rng.choice(sorted(record) + ["created_utc", "parent_id", "body", "kind", "data", "_meta",
                                           "removed_by_category"])
        if roll < 0.35:
            record[key] = rng.choice(_ODD_VALUES)
        elif roll < 0.5:
            record.pop(key, None)
        elif roll < 0.7:  # a parent from the same pool: self-parents and loops happen
            record["parent_id"] = rng.choice(["t1_" + rng.choice(ids), record.get("name", ""), "t3_zzz", ""])
        elif roll < 0.8:
            depth = rng.choice([10, 400, 600, 5000])
            record[key] = json.loads("[" * min(depth, 400) + "]" * min(depth, 400)) if depth <= 400 else None
            if depth > 400:
                text = json.dumps(record)[:-1] + f', "{key}x": ' + "[" * depth + "]" * depth + "}"
                return text.encode("utf-8", "surrogatepass")
        elif roll < 0.9:
            record = {"kind": "t1", "data": record}
        else:
            text = json.dumps(record, ensure_ascii=False)
            number = rng.choice(_NUMBERS).decode()
            return text.replace(str(record.get("created_utc")), number, 1).encode("utf-8", "surrogatepass")
    return json.dumps(record, ensure_ascii=rng.random() < 0.5).encode("utf-8", "surrogatepass")


def _mutate_bytes(rng: random.Random, line: bytes) -> bytes:
    """A byte-level mutant: flips, inserts (newlines, quotes, brackets, invalid UTF-8), cuts,
    deletions and repeats."""
    data = bytearray(line)
    for _ in range(rng.randint(1, 4)):
        if not data:
            data += b"{"
        at = rng.randrange(len(data))
        roll = rng.random()
        if roll < 0.3:
            data[at] = rng.randrange(256)
        elif roll < 0.5:
            data[at:at] = rng.choice([b"\n", b'"', b"{", b"[", b"\\", b"\xff", b"\xc3", b"\\ud800", b"\x00", b"}"])
        elif roll < 0.7:
            del data[at:at + rng.randint(1, 40)]
        elif roll < 0.85:
            data[at:at] = data[at:at + rng.randint(1, 200)] * rng.randint(1, 5)
        else:
            del data[at:]
    return bytes(data)


def mutants(seed: int, count: int) -> list[bytes]:
    """``count`` mutated dump lines (they may hold newlines, so more lines than mutants)."""
    rng = random.Random(seed)
    records = _records(seed)
    ids = [str(r.get("id")) for r in records]
    out = []
    for _ in range(count):
        record = rng.choice(records)
        roll = rng.random()
        if roll < 0.15:
            out.append(json.dumps(record).encode())  # some stay valid, so threads form
        elif roll < 0.55:
            out.append(_mutate_record(rng, record, ids))
        elif roll < 0.95:
            out.append(_mutate_bytes(rng, json.dumps(record).encode()))
        else:
            out.append(_mutate_bytes(rng, _mutate_record(rng, record, ids)))
    return out


def _read(path) -> tuple[list, list, Counter]:
    dofn = ReadPosts(CONFIG)
    dofn.setup()
    dofn.start_bundle()
    posts, letters = [], []
    for out in dofn.process(str(path)):
        tag = getattr(out, "tag", None)  # other tags (the file's digest, the schema tallies) are not posts
        (letters.append(out.value) if tag == REJECTED else posts.append(out) if tag is None else None)
    return posts, letters, dofn.tally


def _check_letter(letter: dict) -> None:
    text = json.dumps(letter, ensure_ascii=False)
    text.encode("utf-8")  # the published file is UTF-8
    assert not MENTION.search(text) and not EMAIL.search(text), text
    assert not PRIVATE_KEY.search(letter["text"]), text
    # the generator's usernames (user123, AutoModerator) and author fullnames (t2_...)
    assert not SAMPLE_USER.search(text) and "t2_" not in text and "automoderator" not in text.lower(), text
    assert letter["file"] is None or "/" not in letter["file"]


def _threads_and_examples(posts: list) -> Counter:
    """Thread resolution, cleaning and examples of the kept posts, as the job runs them."""
    by_thread = defaultdict(list)
    for link_id, post in posts:
        by_thread[link_id].append(Post(*post))
    counts = Counter()
    resolved_threads = []
    for link_id, group in sorted(by_thread.items()):
        resolved, tally, rejected = threads.resolve_thread(link_id, group)
        counts.update(tally)
        counts["posts-in-threads"] += len(resolved)
        resolved_threads.append((link_id, threads.clean_thread(resolved, CONFIG)))
    words = Counter(t for _, nodes in resolved_threads for n in nodes for t in n.text.split())
    vocabulary = build_vocabulary(words, vocab_size=CONFIG.vocab_size, rare_max_count=CONFIG.rare_max_count,
                                  piece_min_count=CONFIG.piece_min_count, min_split_length=CONFIG.min_split_length)
    for link_id, nodes in resolved_threads:
        for outcome in threads.thread_examples(link_id, nodes, vocabulary, CONFIG):
            if isinstance(outcome, Kept):
                counts[outcome.value.config] += 1
            else:
                counts[outcome.reason if isinstance(outcome, Dropped) else "lengths"] += 1
    return counts


@pytest.mark.parametrize("seed", LINE_SEEDS)
def test_mutated_lines_are_kept_dropped_or_counted_dead_letters(tmp_path, seed):
    lines = mutants(seed, LINES_PER_SEED)
    path = tmp_path / f"RC_fuzz{seed}.jsonl"
    data = b"\n".join(lines) + b"\n"
    path.write_bytes(data)
    with time_limit(60):
        posts, letters, counts = _read(path)
        thread_counts = _threads_and_examples(posts)
    nonblank = sum(1 for line in data.split(b"\n") if line.strip())
    kept = counts["posts-kept-comments"] + counts["posts-kept-submissions"]
    dropped = sum(n for k, n in counts.items() if k.startswith("dropped-"))
    rejected = sum(n for k, n in counts.items() if k.startswith("rejected-"))
    tombstones = sum(1 for _, post in posts if post[0] == "deleted")  # deleted posts go on as these
    assert kept == len(posts) - tombstones and rejected == len(letters)
    assert kept + dropped + rejected == nonblank  # every line accounted for, once
    assert 0 < kept and 0 < rejected  # the mutants really are mixed
    resolved = thread_counts["posts-in-threads"] + thread_counts["rejected-parent-cycle"]
    assert resolved + thread_counts["dropped-below-parent-cycle"] + thread_counts["dropped-duplicate-id"] \
        + thread_counts["dropped-deleted-in-another-copy"] == kept
    for letter in letters:
        _check_letter(letter)


def _frames(seed: int) -> list[tuple[str, bytes]]:
    """Gzip and zstd files of real-shaped lines, with flipped, cut or appended bytes."""
    rng = random.Random(1000 + seed)
    body = b"".join(json.dumps(r).encode() + b"\n" for r in _records(seed))
    good = {"gz": gzip.compress(body, 6), "zst": zstandard.ZstdCompressor(level=3, write_checksum=True).compress(body)}
    out = []
    for _ in range(FRAMES_PER_SEED):
        kind = rng.choice(["gz", "zst"])
        blob = bytearray(good[kind] * rng.choice([1, 1, 2]))
        for _ in range(rng.randint(1, 3)):
            roll = rng.random()
            at = rng.randrange(len(blob))
            if roll < 0.5:
                blob[at] ^= 1 << rng.randrange(8)
            elif roll < 0.7:
                del blob[at:]
            elif roll < 0.85:
                blob += bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
            else:
                blob[at:at] = good[rng.choice(["gz", "zst"])][:rng.randint(4, 40)]
            if not blob:
                blob += b"\x1f\x8b"
        out.append((kind, bytes(blob)))
    return out


def _read_and_check_stream(path) -> tuple:
    """Read one mutated archive through the job's per-element code within 30 s: at most one
    end-of-stream letter, and last; every rejection counted; every letter publishable."""
    with time_limit(30):
        posts, letters, counts = _read(path)
        _threads_and_examples(posts)
    ends = [i for i, x in enumerate(letters) if x["reason"] in ("corrupt-file", "truncated-file")]
    assert ends in ([], [len(letters) - 1])  # at most one, and last
    assert sum(n for k, n in counts.items() if k.startswith("rejected-")) == len(letters)
    for letter in letters:
        _check_letter(letter)
    return letters, counts


@pytest.mark.parametrize("seed", FRAME_SEEDS)
def test_mutated_gzip_and_zstd_frames_end_in_one_letter_at_most(tmp_path, seed):
    for number, (kind, blob) in enumerate(_frames(seed)):
        path = tmp_path / f"RC_{number}.{kind}"
        path.write_bytes(blob)
        letters, counts = _read_and_check_stream(path)
        path.unlink()


def _skippable(rng: random.Random) -> bytes:
    payload = bytes(rng.randrange(256) for _ in range(rng.choice([0, 4, 17, 64])))
    return bytes([0x50 | rng.randrange(16)]) + b"\x2a\x4d\x18" + len(payload).to_bytes(4, "little") + payload


_BOMB_LINES = {  # an over-long line each (1 MiB + a little), and one without an end
    "long": b'{"subreddit": "movies", "body": "' + b"a" * (sources.MAX_LINE_BYTES + 100) + b'"}\n',
    "long-array": b'[' + b"1," * (sources.MAX_LINE_BYTES // 2) + b'1]\n',
    "endless": b"\x00" * (sources.MAX_LINE_BYTES + 4096),
}


def _archives(seed: int) -> list[tuple[str, bytes, int | None, int]]:
    """``(kind, file, good lines or None when mutated, over-long lines)``: zstd frames with
    skippable frames before, between and after them, gzip members, bomb frames of over-long
    lines, and with one chance in two the byte mutations of :func:`_frames`."""
    rng = random.Random(2000 + seed)
    lines = [json.dumps(r).encode() + b"\n" for r in _records(seed)]
    compress = {"zst": zstandard.ZstdCompressor(level=1).compress, "gz": lambda d: gzip.compress(d, 1)}
    out = []
    for _ in range(ARCHIVES_PER_SEED):
        kind = rng.choice(["zst", "zst", "gz"])
        cuts = sorted(rng.sample(range(1, len(lines)), rng.randint(0, 3)))
        parts = [b"".join(lines[a:b]) for a, b in zip([0] + cuts, cuts + [len(lines)])]
        bombs = list(rng.choice([[], [], ["long"], ["long", "long-array"], ["endless"]]))
        longs = len(bombs)  # one too-long letter each
        blob = bytearray()
        for part in parts:
            if kind == "zst" and rng.random() < 0.6:
                blob += _skippable(rng)
            blob += compress[kind](part)
            if bombs and bombs[0] != "endless" and rng.random() < 0.5:
                blob += compress[kind](_BOMB_LINES[bombs.pop(0)])
        for bomb in bombs:  # the rest at the end ("endless" always last: nothing after it is read)
            blob += compress[kind](_BOMB_LINES[bomb])
        mutated = rng.random() < 0.5
        if mutated:
            for _ in range(rng.randint(1, 2)):
                at = rng.randrange(len(blob))
                roll = rng.random()
                if roll < 0.5:
                    blob[at] ^= 1 << rng.randrange(8)
                elif roll < 0.75:
                    del blob[at:]
                else:
                    blob[at:at] = _skippable(rng)
            if not blob:
                blob += b"\x28\xb5\x2f\xfd"
        out.append((kind, bytes(blob), None if mutated else len(lines), longs))
    return out


@pytest.mark.parametrize("seed", ARCHIVE_SEEDS)
def test_archives_with_skippable_frames_and_bombs(tmp_path, seed):
    for number, (kind, blob, good, longs) in enumerate(_archives(seed)):
        path = tmp_path / f"RC_{number}.{kind}"
        path.write_bytes(blob)
        letters, counts = _read_and_check_stream(path)
        if good is not None:  # unmutated: every line read, skippable frames skipped, each bomb one letter
            kept_or_dropped = sum(n for k, n in counts.items() if k.startswith(("posts-kept", "dropped-")))
            assert kept_or_dropped == good, (number, counts)
            assert [x["reason"] for x in letters] == ["too-long"] * longs, (number, letters)
        path.unlink()


def test_builds_on_files_full_of_mutants(tmp_path):
    import datasets

    inputs = tmp_path / "in"
    inputs.mkdir()
    good = [json.dumps(r).encode() for r in _records(99)]  # a base of valid threads
    (inputs / "RC_mutants.jsonl").write_bytes(b"\n".join(good + mutants(99, BUILD_LINES)) + b"\n")
    for number, (kind, blob) in enumerate(_frames(99)[:BUILD_FRAMES]):
        (inputs / f"RC_frame{number:02d}.jsonl.{kind}").write_bytes(blob)
    for number, (kind, blob, _, _) in enumerate(_archives(99)[:BUILD_ARCHIVES]):
        (inputs / f"RC_archive{number:02d}.jsonl.{kind}").write_bytes(blob)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "multiref_cli", "lsdscc", "build", "--skip-testset", "--input",
                           str(inputs), "--output", str(out), "--validation-fraction", "0.2"],
                          capture_output=True, text=True, timeout=300)
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = datasets.load_dataset(str(out), "single_turn", cache_dir=str(tmp_path / "hf"))
    assert loaded["train"].num_rows > 0
    datasets.load_dataset(str(out), "multi_turn", cache_dir=str(tmp_path / "hf"))
    counts = json.loads((out / "stats.json").read_text())["counts"]
    published = (out / "rejected" / "rejected.jsonl").read_text(encoding="utf-8")
    letters = [json.loads(line) for line in published.splitlines()]
    assert len(letters) == sum(n for k, n in counts.items() if k.startswith("rejected-")) > 0
    assert str(tmp_path) not in published
    for letter in letters:
        _check_letter(letter)


# --- privacy (issue 35): usernames in random markup, deletion in random orders ------------------
NAME_CASES = 2000  # texts, each cleaned four ways (two conventions, with and without the C fast path)
DELETION_CASES = 300  # random threads, each resolved in four random orders
_MENTION_FORMS = ["u/", "/u/", "user/", "/user/", "U/", "/U/", "USER/", "u\\/", "u&#47;", "u&#x2F;", "u**/**",
                  "u&amp;#47;", "&#117;/", "u/**"]
_WRAPS = ["{}", "_{}_", "**{}**", "*{}*", "~~{}~~", "`{}`", "[{}](http://x.com)", "({})", "&gt; {}", "^({})",
          ">!{}!<", "# {}", "- {}", '"{}"', "{},", "{}.", "[{}]", "<b>{}</b>", "\\*{}\\*", "{}'s"]
_FILLER = ["great movie", "lol", "&gt;", "**", "_", "[", "](", "\n", "    ", "haha", ":)", "e.g.", "1st",
           "www.x.org", "so u know", "you/me", "menu/item", "&amp;", "~~", "`", "^", "\\", "😂", "ｕ"]


def _named_text(rng: random.Random, number: int) -> str:
    name = rng.choice(["Zqx", "zQX", "ZQX"]) + rng.choice(["", "_", "-", "\\_"]) + f"name{number}"
    form = rng.choice(_MENTION_FORMS)
    mention = rng.choice(_WRAPS).format(form + name + ("**" if form.endswith("/**") else ""))
    words = lambda: " ".join(rng.choice(_FILLER) for _ in range(rng.randint(0, 4)))  # noqa: E731
    return f"{words()} {mention} {words()}"


def test_usernames_in_random_markup_never_survive_cleaning():
    from lsdscc.corpus import cleaning

    rng = random.Random(35)
    texts = [_named_text(rng, i) for i in range(NAME_CASES)]
    for fast in (True, False):
        with time_limit(60):
            for text in texts:
                for convention in ("lsdscc", "treebank"):
                    tokens = cleaning.clean_and_tokenize(text, convention=convention, native=fast)
                    assert "zqx" not in "".join(tokens).lower(), (text, convention, fast, tokens)


def _random_copies(rng: random.Random) -> tuple[list, set, bool]:
    """Copies of one thread's posts (1-3 each), tombstones for some ids, maybe a title-only copy."""
    n = rng.randint(1, 12)
    ids = [f"t1_c{i}" for i in range(n)]
    deleted = {i for i in ids + ["t3_s"] if rng.random() < 0.3}
    copies = [Post(DELETED, i, "t3_s", "", 0, "") for i in deleted]
    for k, post_id in enumerate(ids):
        parent = rng.choice(["t3_s"] + ids[:k] + [rng.choice(ids)])  # loops and self-parents happen
        for _ in range(rng.randint(1 if post_id not in deleted else 0, 3)):
            text = "gone text" if post_id in deleted else f"text {rng.randint(0, 3)}"
            copies.append(Post("t1", post_id, "t3_s", parent, rng.randint(1, 5), text))
    title_only = rng.random() < 0.3
    for _ in range(rng.randint(1, 2)):
        copies.append(Post("t3", "t3_s", "t3_s", "", rng.randint(1, 5), "title\n\n" + ("gone text" if title_only else "body")))
    if title_only:
        copies.append(Post(TITLE_ONLY, "t3_s", "t3_s", "", 1, "title"))
    return copies, deleted, title_only


def test_deletion_wins_whatever_the_order():
    rng = random.Random(17)
    for _ in range(DELETION_CASES):
        copies, deleted, title_only = _random_copies(rng)
        results = set()
        for _ in range(4):
            rng.shuffle(copies)
            posts, counts, rejected = threads.resolve_thread("t3_s", list(copies))
            results.add((posts, tuple(sorted(counts.items())), rejected))
        ((posts, counts, rejected),) = results  # the same whatever the order
        kept = {p.id for p in posts} | {p.id for p, _ in rejected}
        assert not kept & deleted and "gone text" not in repr((posts, rejected)), (copies, posts)
        assert not title_only or "t3_s" in deleted or [p.text for p in posts if p.id == "t3_s"] == ["title"]
