"""Seeded Reddit dumps shaped like Pushshift's, for the benchmarks and the tests.

:func:`write_month` writes a month of r/movies (``RS``/``RC`` zstd files, the RC 2019-06 field
set) from the sample generator's threads, with its short templated bodies or realistic ones
(:mod:`lsdscc.synthetic.text`); :func:`write_mixed` a comment dump where r/movies is a small
share; :func:`baseline_parse` and :func:`baseline_filter` are the plain decode-and-parse
baselines the corpus reader is timed against. Same arguments, same bytes.
"""

from __future__ import annotations

import json
import os
import random
import time
import zlib

OTHER_SUBREDDITS = (
    "AskReddit", "pics", "funny", "gaming", "worldnews", "todayilearned", "nba", "politics", "aww",
    "television", "MovieSuggestions", "moviescirclejerk", "NoStupidQuestions", "soccer", "news",
)
WORDS = (
    "the a and to of I it that is was you in for this my on with but just like have not be so they "
    "what are at if he do all me can one would your about think people get more when out time no "
    "really good game movie team year know because thing see make still even then now much way "
    "post show watch great pretty love someone lol yeah actually probably always never"
).split()
SLUGS = ["_".join(random.Random(n).sample(WORDS, 5)) for n in range(500)]


def _b36(n: int) -> str:
    from lsdscc.corpus.sample_gen import base36

    return base36(n)


def comment_record(rng, cid, link, parent, body, author, subreddit, created, score) -> dict:
    """One comment with the RC 2019-06 field set (46 keys; Pushshift's key order)."""
    sub_id = "t5_2qh3s" if subreddit == "movies" else "t5_" + _b36(zlib.crc32(subreddit.encode()) % 36**5)
    return {
        "all_awardings": [], "associated_award": None, "author": author,
        "author_created_utc": created - rng.randrange(10**8), "author_flair_background_color": None,
        "author_flair_css_class": None, "author_flair_richtext": [], "author_flair_template_id": None,
        "author_flair_text": None, "author_flair_text_color": None, "author_flair_type": "text",
        "author_fullname": f"t2_{rng.getrandbits(30):x}", "author_patreon_flair": False,
        "awarders": [], "body": body, "can_gild": True, "can_mod_post": False, "collapsed": False,
        "collapsed_reason": None, "controversiality": int(rng.random() < 0.02), "created_utc": created,
        "distinguished": None, "edited": False, "gilded": 0, "gildings": {}, "id": cid,
        "is_submitter": rng.random() < 0.1, "link_id": "t3_" + link, "locked": False, "no_follow": True,
        "parent_id": parent, "permalink": f"/r/{subreddit}/comments/{link}/{rng.choice(SLUGS)}/{cid}/",
        "quarantined": False, "removal_reason": None, "retrieved_on": created + 2_592_000 + rng.randrange(86400),
        "score": score, "send_replies": True, "stickied": False, "steward_reports": [], "subreddit": subreddit,
        "subreddit_id": sub_id, "subreddit_name_prefixed": "r/" + subreddit, "subreddit_type": "public",
        "total_awards_received": 0,
    }


def _line(record: dict) -> bytes:
    try:
        import orjson  # the same compact UTF-8 JSON, 10x faster to make
    except ImportError:
        return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    return orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE)


def _body(rng) -> str:
    words = [rng.choice(WORDS) for _ in range(max(1, int(rng.lognormvariate(3.2, 0.8))))]
    x = rng.random()
    if x < 0.005:  # quoted talk about subreddits: escaped quotes inside the body
        words.append('"subreddit": "movies" is where "Movies" go')
    elif x < 0.01:
        words.append("see r/movies")
    return " ".join(words)


def write_mixed(path: str, lines: int, share: float = 0.001, seed: int = 7, level: int = 3) -> int:
    """A comment dump of ``lines`` lines, ``share`` of them r/movies; returns the r/movies lines."""
    import zstandard

    rng = random.Random(seed)
    bodies = [_body(rng) for _ in range(5000)]
    created, movies = 1_559_347_200, 0
    with open(path, "wb") as raw, zstandard.ZstdCompressor(level=level).stream_writer(raw) as out:
        batch = []
        for i in range(lines):
            mine = rng.random() < share
            movies += mine
            subreddit = "movies" if mine else rng.choice(OTHER_SUBREDDITS)
            created += rng.randrange(3)
            link = f"{0x8000000 + rng.getrandbits(24):x}"  # hex: valid base36 ids
            parent = "t3_" + link if rng.random() < 0.4 else f"t1_{0x1000000000 + rng.randrange(i + 1):x}"
            rec = comment_record(rng, f"{0x1000000000 + i:x}", link, parent, rng.choice(bodies),
                                 f"user{rng.randrange(10**6)}", subreddit, created, rng.randrange(-5, 500))
            batch.append(_line(rec))
            if len(batch) == 10000:
                out.write(b"".join(batch))
                batch = []
        out.write(b"".join(batch))
    return movies


KEPT_BODIES = frozenset({"[deleted]", "[removed]"})
KEPT_AUTHORS = frozenset({"AutoModerator", "RemindMeBot", "[deleted]"})


def _bodies(text: str, seed: int):
    """``body(comment)`` for ``--text``: the thread generator's own (benchmark) or realistic ones.

    Realistic mode replaces every body but deleted/removed ones and the bots' (their rules
    are what the pipeline filters on), so thread shapes and filters stay the same.
    """
    if text == "benchmark":
        return lambda c: c["body"]
    from lsdscc.synthetic.text import RealisticText

    draw = RealisticText(seed).body
    return lambda c: c["body"] if c["body"] in KEPT_BODIES or c["author"] in KEPT_AUTHORS else draw()


def write_month(folder: str, comments: int, seed: int = 13, level: int = 3, text: str = "benchmark") -> list:
    """A month of r/movies: RS (submissions) + RC (``comments`` comments, RC 2019 field set).

    ``text``: ``benchmark`` (the thread generator's short templated bodies) or ``realistic``
    (:mod:`lsdscc.synthetic.text`: real Reddit lengths and markup). Threads and record fields are the
    same in both.
    """
    import zstandard

    from lsdscc.corpus.sample_gen import iter_threads

    rng = random.Random(seed)
    body = _bodies(text, seed)
    os.makedirs(folder, exist_ok=True)
    rs_path, rc_path = os.path.join(folder, "RS_2019-06.zst"), os.path.join(folder, "RC_2019-06.zst")
    with open(rs_path, "wb") as rs_raw, open(rc_path, "wb") as rc_raw, \
            zstandard.ZstdCompressor(level=level).stream_writer(rs_raw) as rs, \
            zstandard.ZstdCompressor(level=level).stream_writer(rc_raw) as rc:
        for sub, coms in iter_threads(comments, seed):
            rs.write(_line(sub))
            rc.write(b"".join(
                _line(comment_record(rng, c["id"], sub["id"], c["parent_id"], body(c), c["author"], "movies",
                                     int(float(c["created_utc"])), c["score"]))
                for c in coms
            ))
    return [rs_path, rc_path]


def _decoded_lines(path: str):
    """Baseline decoding: zstd stream reader, 16 MB reads, whole-chunk line splits."""
    import zstandard

    rest = b""
    with open(path, "rb") as fh, zstandard.ZstdDecompressor(max_window_size=2**31).stream_reader(fh) as reader:
        while True:
            chunk = reader.read(16 << 20)
            if not chunk:
                break
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            yield lines
    if rest:
        yield [rest]


def baseline_filter(path: str) -> tuple[int, float]:
    """Decode and byte-filter every line: (lines containing '"movies"', seconds)."""
    t0, kept = time.perf_counter(), 0
    for lines in _decoded_lines(path):
        for line in lines:
            if b'"movies"' in line:
                kept += 1
    return kept, time.perf_counter() - t0


def baseline_parse(paths) -> tuple[int, float, float]:
    """Decode and json-parse every line: (records, seconds, CPU seconds)."""
    t0, c0, n = time.perf_counter(), time.process_time(), 0
    for path in paths:
        for lines in _decoded_lines(path):
            for line in lines:
                if line:
                    json.loads(line)
                    n += 1
    return n, time.perf_counter() - t0, time.process_time() - c0
