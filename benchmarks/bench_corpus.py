"""Benchmark: the LSDSCC dump reader and the whole corpus build, each against a plain baseline.

Generates Pushshift-shaped monthly dumps itself (zstd JSON lines, seeded): comments carry
the real 2019 comment field set (46 keys, as listed in the Arctic Shift schema statistics of
RC_2019-06, ``/work/shared/data/reddit-samples``), about 1.2 KB a line. Then, in one run:

a. reader: a file of ``--lines`` comments of which 0.1% are r/movies;
   ``lsdscc.sources.read_items(path, subreddits=("movies",))`` consuming every item, vs the
   baseline "decode the same file and byte-filter its lines" (zstd stream reader, split
   lines, ``b'"movies"' in line``, no JSON). Goal: at most 4x. The exact path
   (``read_items(path)``, every line parsed) is printed beside it.
b. build: a month of ``--comments`` r/movies comments (threads from lsdscc.sample_gen, with
   their submissions) built by ``pipelines.lsdscc_corpus.run`` in a child process, vs the
   baseline "decode the same files and json-parse every line". Goal: at most 8x. The peak
   RSS of the build is the child's ``ru_maxrss`` (``resource.getrusage(RUSAGE_CHILDREN)``),
   so the baseline's memory does not mix in. Goal: at most 1.5 GB.

Timings are in-process wall-clock seconds (best of ``--repeat`` for the reader part); the
build's figure is the ``run()`` call inside the child, its whole-process time is printed
too. Extra arguments go to the pipeline (e.g. Beam flags)::

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_corpus.py            # 400k lines, 300k comments
    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_corpus.py --quick    # 100k lines, 30k comments
    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_corpus.py --lines 1200000 --json out/bench_corpus.json
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

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
GOAL_READER, GOAL_BUILD, GOAL_RSS_MB = 4.0, 8.0, 1536


def _b36(n: int) -> str:
    from lsdscc.sample_gen import base36

    return base36(n)


def comment_record(rng, cid, link, parent, body, author, subreddit, created, score) -> dict:
    """One comment with the RC 2019-06 field set (46 keys; Pushshift's key order)."""
    sub_id = "t5_2qh3s" if subreddit == "movies" else "t5_" + _b36(zlib.crc32(subreddit.encode()) % 36**5)
    return {
        "all_awardings": [], "associated_award": None, "author": author,
        "author_created_utc": created - rng.randrange(10**8), "author_flair_background_color": None,
        "author_flair_css_class": None, "author_flair_richtext": [], "author_flair_template_id": None,
        "author_flair_text": None, "author_flair_text_color": None, "author_flair_type": "text",
        "author_fullname": "t2_" + _b36(rng.randrange(36**6, 36**7)), "author_patreon_flair": False,
        "awarders": [], "body": body, "can_gild": True, "can_mod_post": False, "collapsed": False,
        "collapsed_reason": None, "controversiality": int(rng.random() < 0.02), "created_utc": created,
        "distinguished": None, "edited": False, "gilded": 0, "gildings": {}, "id": cid,
        "is_submitter": rng.random() < 0.1, "link_id": "t3_" + link, "locked": False, "no_follow": True,
        "parent_id": parent, "permalink": f"/r/{subreddit}/comments/{link}/{'_'.join(rng.sample(WORDS, 5))}/{cid}/",
        "quarantined": False, "removal_reason": None, "retrieved_on": created + 2_592_000 + rng.randrange(86400),
        "score": score, "send_replies": True, "stickied": False, "steward_reports": [], "subreddit": subreddit,
        "subreddit_id": sub_id, "subreddit_name_prefixed": "r/" + subreddit, "subreddit_type": "public",
        "total_awards_received": 0,
    }


def _line(record: dict) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


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
            link = _b36(36**5 * 20 + rng.randrange(36**5))
            parent = "t3_" + link if rng.random() < 0.4 else "t1_" + _b36(36**6 * 30 + rng.randrange(i + 1))
            rec = comment_record(rng, _b36(36**6 * 30 + i), link, parent, rng.choice(bodies),
                                 f"user{rng.randrange(10**6)}", subreddit, created, rng.randrange(-5, 500))
            batch.append(_line(rec))
            if len(batch) == 10000:
                out.write(b"".join(batch))
                batch = []
        out.write(b"".join(batch))
    return movies


def write_month(folder: str, comments: int, seed: int = 13, level: int = 3) -> list:
    """A month of r/movies: RS (submissions) + RC (``comments`` comments, RC 2019 field set)."""
    import zstandard

    from lsdscc.sample_gen import iter_threads

    rng = random.Random(seed)
    os.makedirs(folder, exist_ok=True)
    rs_path, rc_path = os.path.join(folder, "RS_2019-06.zst"), os.path.join(folder, "RC_2019-06.zst")
    with open(rs_path, "wb") as rs_raw, open(rc_path, "wb") as rc_raw, \
            zstandard.ZstdCompressor(level=level).stream_writer(rs_raw) as rs, \
            zstandard.ZstdCompressor(level=level).stream_writer(rc_raw) as rc:
        for sub, coms in iter_threads(comments, seed):
            rs.write(_line(sub))
            rc.write(b"".join(
                _line(comment_record(rng, c["id"], sub["id"], c["parent_id"], c["body"], c["author"], "movies",
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


def baseline_parse(paths) -> tuple[int, float]:
    """Decode and json-parse every line: (records, seconds)."""
    t0, n = time.perf_counter(), 0
    for path in paths:
        for lines in _decoded_lines(path):
            for line in lines:
                if line:
                    json.loads(line)
                    n += 1
    return n, time.perf_counter() - t0


def timed_reader(path: str, subreddits) -> tuple[dict, float]:
    """``read_items`` consumed to the end: (counts by item kind, lines; seconds)."""
    from lsdscc.sources import read_items

    t0 = time.perf_counter()
    counts = {"ok": 0, "rejected": 0, "skipped": 0}
    for item in read_items(path, subreddits=subreddits):
        counts[item[0]] += item[1] if item[0] == "skipped" else 1
    return counts, time.perf_counter() - t0
