"""Benchmark of the LSDSCC test-set stage (ALGORITHMS.md section 2) on a generated corpus.

Generates a corpus folder of ``--pairs`` (default 1,000,000) single-turn pairs of templated
movie talk, written with :mod:`multiref.hfdata` in the corpus columns of CONTRACTS.md, then
runs the whole stage and reports the time of each step (Lucene indexing, top-100 search
for the sampled queries, Doc2Vec training, re-ranking and assembly, leak removal) and the
peak memory of the process (the JVM runs inside it). Target: the whole stage under 15
minutes on a 2-core machine.

    .venv/bin/python benchmarks/bench_testset.py                       # 1M pairs, defaults below
    .venv/bin/python benchmarks/bench_testset.py --pairs 50000 --keep out/bench

Every stage option of ``multiref lsdscc testset`` is accepted, with the stage's defaults
(PV-DM, 100 dimensions, 10 epochs, one reproducible worker); the report prints them
("options"). A faster variant: ``--doc2vec-dm 0 --doc2vec-epochs 5 --doc2vec-workers 2``.

Measured (2 cores shared with other jobs, load average 2-4): stage defaults 281 s in all
(index 14.7 s, search 5.7 s, Doc2Vec 248 s, re-rank 1.9 s, leak removal 4.6 s), peak RSS
2.6 GB; the faster variant 185 s (Doc2Vec 152 s).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TITLES = ["the dark knight", "inception", "interstellar", "alien", "the thing", "jaws", "heat", "up", "coco",
          "the prestige", "memento", "dune", "arrival", "sicario", "prisoners", "zodiac", "se7en", "fargo",
          "the matrix", "blade runner", "the shining", "get out", "us", "nope", "her", "drive", "whiplash",
          "parasite", "oldboy", "the godfather", "goodfellas", "casino", "the departed", "the irishman",
          "mad max", "the raid", "john wick", "top gun", "predator", "robocop", "total recall", "tenet",
          "oppenheimer", "dunkirk", "insomnia", "following", "batman begins", "the lego movie", "toy story",
          "finding nemo", "ratatouille", "wall e", "inside out", "soul", "luca", "hereditary", "midsommar"]
PEOPLE = ["nolan", "villeneuve", "fincher", "scorsese", "carpenter", "spielberg", "cameron", "scott", "peele",
          "bong", "park", "coppola", "kubrick", "miller", "pixar", "zimmer", "williams", "deakins", "lynch", "craig",
          "connery", "bale", "ledger", "hardy", "dicaprio", "pacino", "de niro", "pesci", "weaver", "gosling"]
ADJ = ["great", "amazing", "boring", "overrated", "underrated", "scary", "funny", "sad", "long", "beautiful",
       "weird", "perfect", "terrible", "fun", "dark", "slow", "smart", "loud", "classic", "forgettable"]
QUERY_TEMPLATES = [
    "what do you think of {t}", "is {t} worth watching", "{t} is {a}", "just watched {t} and it was {a}",
    "why is {t} so {a}", "{p} made {t} and it is {a}", "which is better {t} or {t2}", "anyone else think {t} is {a}",
    "the score of {t} by {p} is {a}", "best scene in {t}", "i finally saw {t} , {a} movie",
    "who else loves {p} and {t}", "rewatching {t} tonight", "{t} vs {t2} , thoughts ?",
]
RESPONSE_TEMPLATES = [
    "{t} is {a}", "i think {t} is {a}", "{p} is {a} in it", "no , {t2} is better", "agreed , {a} movie",
    "the ending of {t} was {a}", "i prefer {t2}", "{p} at his best", "never seen it", "it was {a} and {a2}",
    "watch {t2} instead", "the first half is {a}", "digits times and still {a}", "yes", "lol",
    "{t} and {t2} are both {a}", "{p} should have directed {t2}", "that scene with {p} was {a}",
]


COMMON = ("the a and to of i it is that in was you this for but with on movie film just like not have be so "
          "are one they what all at as if about my think really good would more there was his he she can "
          "scene time first people watch seen story end character actor plot see even much also only").split()
# A Zipf-like vocabulary (common words first, then 30,000 rarer made-up words), so that
# sentences are nearly all distinct, as in real data (Doc2Vec would be unfairly fast otherwise).
VOCAB = COMMON + [w for t in TITLES + PEOPLE for w in t.split()] + [f"w{i}" for i in range(30_000)]
CUM_WEIGHTS = []
_total = 0.0
for _rank in range(len(VOCAB)):
    _total += 1.0 / (_rank + 1)
    CUM_WEIGHTS.append(_total)


def _fill(rng: random.Random, template: str, tail: tuple) -> str:
    head = template.format(t=rng.choice(TITLES), t2=rng.choice(TITLES), p=rng.choice(PEOPLE), a=rng.choice(ADJ),
                           a2=rng.choice(ADJ))
    words = rng.choices(VOCAB, cum_weights=CUM_WEIGHTS, k=rng.randint(*tail))
    return head + " " + " ".join(words) if words else head


def generate(folder: str, pairs: int, seed: int = 0, shards: int = 4) -> dict:
    """Write a corpus folder of ``pairs`` single-turn pairs (and one conversation per pair)."""
    import pyarrow as pa
    from multiref import hfdata

    rng = random.Random(seed)
    single = pa.schema([("id", pa.string()), ("thread_id", pa.string()), ("query_id", pa.string()),
                        ("response_id", pa.string()), ("query", pa.string()), ("response", pa.string()),
                        ("created_utc", pa.int64()), ("response_number", pa.int64())])
    multi = pa.schema([("id", pa.string()), ("thread_id", pa.string()), ("comment_ids", pa.list_(pa.string())),
                       ("turns", pa.list_(pa.string())), ("created_utc", pa.int64())])
    columns = {f.name: [] for f in single}
    q = 0
    while len(columns["id"]) < pairs:
        # responses per query: 1-2 (half), 3-5 (a third), 6-12 (the rest): every stratum is large
        r = rng.random()
        n = rng.randint(1, 2) if r < 0.5 else rng.randint(3, 5) if r < 0.83 else rng.randint(6, 12)
        n = min(n, pairs - len(columns["id"]))
        qid, thread = f"t1_q{q:07d}", f"t3_th{q // 20:06d}"
        query = _fill(rng, rng.choice(QUERY_TEMPLATES), (2, 14))
        for k in range(n):
            rid = f"t1_r{q:07d}_{k:02d}"
            for name, value in (("id", rid), ("thread_id", thread), ("query_id", qid), ("response_id", rid),
                                ("query", query), ("response", _fill(rng, rng.choice(RESPONSE_TEMPLATES), (0, 12))),
                                ("created_utc", 1_300_000_000 + q * 60 + k), ("response_number", n)):
                columns[name].append(value)
        q += 1
    total = len(columns["id"])
    split_at = int(total * 0.85)
    splits = {"train": (0, split_at), "validation": (split_at, total)}
    for split, (lo, hi) in splits.items():
        table = pa.table({k: v[lo:hi] for k, v in columns.items()}, schema=single)
        step = (hi - lo + shards - 1) // shards
        for i in range(shards):
            part = table.slice(i * step, step)
            hfdata.write_parquet(hfdata.shard_path(folder, "single_turn", split, i, shards), part.to_pylist(), single)
    hfdata.add_config(folder, hfdata.ConfigInfo(
        name="single_turn", description="generated templated movie talk (benchmark)",
        splits={s: hi - lo for s, (lo, hi) in splits.items()}, features=single))
    convs = {"id": [], "thread_id": [], "comment_ids": [], "turns": [], "created_utc": []}
    for i in range(0, total, 3):  # a conversation for every third pair
        convs["id"].append(columns["id"][i])
        convs["thread_id"].append(columns["thread_id"][i])
        convs["comment_ids"].append([columns["thread_id"][i], columns["query_id"][i], columns["id"][i]])
        convs["turns"].append(["title", columns["query"][i], columns["response"][i]])
        convs["created_utc"].append(columns["created_utc"][i])
    table = pa.table(convs, schema=multi)
    hfdata.write_parquet(hfdata.shard_path(folder, "multi_turn", "train"), table.to_pylist(), multi)
    hfdata.add_config(folder, hfdata.ConfigInfo(name="multi_turn", description="generated", splits={"train": table.num_rows},
                                                features=multi))
    return {"pairs": total, "queries": q, "conversations": table.num_rows}


def main(argv=None) -> int:
    from lsdscc import testset_cli

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--keep", metavar="FOLDER", help="generate into FOLDER and keep it (default: a temp folder)")
    testset_cli.add_testset_arguments(parser)
    args = parser.parse_args(argv)
    folder = args.keep or tempfile.mkdtemp(prefix="bench-testset-")
    if args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    load = os.getloadavg()
    start = time.perf_counter()
    sizes = generate(folder, args.pairs)
    generate_seconds = time.perf_counter() - start
    print(f"generated {sizes} in {generate_seconds:.1f}s -> {folder}", file=sys.stderr)
    counts = testset_cli.run_testset_stage(folder, args)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB -> MB (Linux)
    retrieval, d2v, sampling = testset_cli.configs_from_args(args)
    report = {
        "corpus": sizes, "generate_seconds": round(generate_seconds, 1), "stage_seconds": counts["seconds"],
        "peak_rss_mb": round(peak), "load_average_before": [round(x, 2) for x in load],
        "load_average_after": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count(),
        "options": {"retrieval": retrieval.options(), "doc2vec": d2v.options(), "sampling": sampling.options(),
                    "lucene_threads": retrieval.threads, "jvm_heap": retrieval.heap},
        "counts": {k: v for k, v in counts.items() if k not in ("seconds", "beam_counters")},
    }
    print(json.dumps(report, indent=2, sort_keys=True))
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
