"""Benchmark of the LSDSCC test-set stage (docs/algorithms.md#2-lsdscc-test-set) on a generated corpus.

Generates a corpus folder of ``--pairs`` (default 1,000,000) single-turn pairs of templated
movie talk, written with :mod:`multiref.output.hfdata` in the corpus columns of docs/corpus.md#output-folder-and-columns, then
runs the whole stage and reports the time of each step (Lucene indexing, top-100 search
for the sampled queries, Doc2Vec training, re-ranking and assembly, leak removal) and the
peak memory of the process (the JVM runs inside it). Target: the whole stage under 15
minutes on a 2-core machine.

    .venv/bin/python benchmarks/bench_testset.py                       # 1M pairs, defaults below
    .venv/bin/python benchmarks/bench_testset.py --pairs 50000 --keep out/bench

Every stage option of ``multiref lsdscc testset`` is accepted, with the stage's defaults
(PV-DM, 100 dimensions, 10 epochs, one reproducible worker); the report prints them
("options"). A faster variant: ``--doc2vec-dm 0 --doc2vec-epochs 5 --doc2vec-workers 2``.

Search baseline (on by default; ``--no-search-baseline`` skips it): after the stage, in the
same process, the sampled queries are searched again with Lucene (the stage's index, the
search call alone timed) and with a plain scipy.sparse TF-IDF scan over every indexed query
(Lucene ClassicSimilarity's formula: sqrt(tf) * idf^1 * query-term count * 1/sqrt(|d|), idf =
1 + ln((N + 1) / (df + 1)); analyzer approximated in Python: \w+ tokens, Lucene's 33 English
stop words and NLTK's original-algorithm Porter stemmer for ``english``). The report's
``search_baseline`` gives both times, the ratio Lucene/baseline, and the mean overlap of the
top-``depth`` sets (a sanity figure, not asserted: tokenizers and norm encoding differ).
Measured (50,000 pairs, 13,833 indexed queries, 300 sampled): Lucene 1.0 s vs scan 0.07 s (+0.8 s
to build its matrix), ratio ~13x (Lucene pays one Python-to-Java call per hit); 200,000 pairs:
2.4 s vs 0.14 s (+1.8 s), ratio ~17x; top-100 overlap 1.0 (299 of 300 sets identical).

Measured (2 cores shared with other jobs, load average 7-10; the corpus is generated in a
child process, so ``peak_rss_mb`` is the stage's own): 1,000,000 pairs (1.19M distinct
sentences, trained in full) 219 s of CPU for the stage, 1,116 s wall, peak RSS 2.6 GB;
5,000,000 pairs (5.89M sentences, Doc2Vec on a seeded sample of 2,000,000) 403 s of CPU,
963 s wall, peak RSS 7.1 GB. Earlier, at load average 2-4: 1M pairs 281 s wall (Doc2Vec
248 s); the faster variant 185 s.

On a real corpus folder instead of generated pairs (:mod:`benchmarks.testset_corpus`): the
stage as the user runs it, ``multiref lsdscc testset --dataset COPY`` in a child process on a
copy of the folder (fresh build cache), the process tree measured step by step (wall, CPU and
peak RSS of each step from ``/proc``, the JVM inside; totals from ``os.wait4``) and the disk
it leaves. ``--realistic-month N`` first writes a realistic month of N r/movies comments (the
month ``bench_corpus.py --text realistic --comments N`` builds; ``--month-seed``) and builds it
with ``multiref lsdscc build --skip-testset`` (``--build-flags``), measured the same way; with
``--keep FOLDER`` the month stays there and is reused by the next run::

    .venv/bin/python benchmarks/bench_testset.py --dataset out/lsdscc-corpus
    .venv/bin/python benchmarks/bench_testset.py --realistic-month 3000000 --keep /tmp/bench-3m

Quality of a Doc2Vec sample (``--overlap N[,N...]``, :mod:`benchmarks.testset_overlap`): instead
of the stage, the re-ranked neighbours of models trained on N sentences against the
full-corpus model's (docs/testset.md#doc2vec-on-a-sample)::

    .venv/bin/python benchmarks/bench_testset.py --pairs 200000 --overlap 130000,65000

``--overlap-processes P`` adds the full corpus trained twice by the deterministic data-parallel
prototype (:mod:`lsdscc.testset.doc2vec_parallel`, P processes, weights averaged after every
epoch); ``--overlap ""`` leaves out the samples. Measured at 200,000 pairs: both runs
byte-identical, recall@10 0.404 against the 0.464 noise floor (not used by the stage)::

    .venv/bin/python benchmarks/bench_testset.py --pairs 200000 --overlap "" --overlap-processes 2

``--overlap-parts P`` adds the full corpus trained with ``--doc2vec-parts P``
(:mod:`lsdscc.testset.doc2vec_parts`) in P processes and again in one (the two
``vectors_sha256`` must be equal); ``P:dims`` and ``P:epochs`` measure two schemes tried and
not offered (every part on all the sentences with its share of the dimensions or of the
epochs). Measured at 200,000 pairs: parts 2 recall@10 0.448 against the 0.464 noise floor,
0.53x the sequential wall time for 1.0x its CPU; at 1,000,000 pairs 0.436 against 0.434,
0.57x wall, 1.08x CPU (docs/testset.md)::

    .venv/bin/python benchmarks/bench_testset.py --pairs 200000 --overlap "" --overlap-parts 2,2:dims
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import resource
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks.testset_overlap import cpu_seconds  # noqa: E402 (this process and its finished children)

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
    from multiref.output import hfdata

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


# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET (Anserini's DefaultEnglishAnalyzer default).
LUCENE_STOP_WORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there these "
    "they this to was will with".split())
_TOKEN = re.compile(r"\w+(?:['\u2019]\w+)*")


def make_analyzer(name: str):
    """A Python approximation of the Lucene analyzer ``name`` (see lsdscc.testset.retrieval)."""
    if name == "whitespace":
        return str.split
    stops, stem = frozenset(), None
    if name == "english":
        from nltk.stem.porter import PorterStemmer

        stops, stem, cache = LUCENE_STOP_WORDS, PorterStemmer(PorterStemmer.ORIGINAL_ALGORITHM).stem, {}

    def analyze(text: str) -> list:
        out = []
        for tok in _TOKEN.findall(text.lower()):
            if tok in stops:
                continue
            if stem is not None:
                s = cache.get(tok)
                if s is None:
                    s = cache[tok] = stem(tok)
                tok = s
            out.append(tok)
        return out

    return analyze


class TfidfScan:
    """Brute-force ClassicSimilarity-like TF-IDF over all documents (scipy.sparse, CSC).

    doc weight w(t, d) = sqrt(tf) / sqrt(|d|); query weight = count(t in q) * idf(t);
    score(q, d) = sum_t w(t, d) * count * idf(t); ties broken by document order (= id order).
    """

    def __init__(self, docs, analyzer: str):
        import numpy as np
        from scipy import sparse

        self.analyze = make_analyzer(analyzer)
        vocab: dict = {}
        ids, indptr, indices, data = [], [0], [], []
        for doc_id, text in docs:
            counts: dict = {}
            for tok in self.analyze(text):
                t = vocab.setdefault(tok, len(vocab))
                counts[t] = counts.get(t, 0) + 1
            if counts:
                norm = 1.0 / math.sqrt(sum(counts.values()))
                indices.extend(counts)
                data.extend(math.sqrt(c) * norm for c in counts.values())
            indptr.append(len(indices))
            ids.append(doc_id)
        self.ids, self.vocab = ids, vocab
        self.matrix = sparse.csr_matrix((np.asarray(data, dtype=np.float64), np.asarray(indices, dtype=np.int64),
                                         np.asarray(indptr, dtype=np.int64)), shape=(len(ids), len(vocab))).tocsc()
        df = np.diff(self.matrix.indptr)
        self.idf = 1.0 + np.log((len(ids) + 1) / (df + 1))

    def search(self, queries, depth: int) -> dict:
        """``{query_id: [doc_id, ...]}``: the top ``depth`` by score, the query itself excluded."""
        import numpy as np

        out = {}
        for query_id, text in queries:
            counts: dict = {}
            for tok in self.analyze(text):
                t = self.vocab.get(tok)
                if t is not None:
                    counts[t] = counts.get(t, 0) + 1
            if not counts:
                out[query_id] = []
                continue
            cols = np.fromiter(counts, dtype=np.int64, count=len(counts))
            weights = np.fromiter(counts.values(), dtype=np.float64, count=len(counts)) * self.idf[cols]
            scores = self.matrix[:, cols] @ weights
            hit = np.flatnonzero(scores > 0)
            if len(hit) > depth + 1:  # keep every doc tied with the (depth+1)-th score
                kth = np.partition(scores[hit], len(hit) - depth - 1)[len(hit) - depth - 1]
                hit = hit[scores[hit] >= kth]
            order = hit[np.lexsort((hit, -scores[hit]))]
            found = [self.ids[i] for i in order if self.ids[i] != query_id]
            out[query_id] = found[:depth]
        return out


def search_baseline(folder: str, args) -> dict:
    """Lucene search (the stage's index) vs :class:`TfidfScan` for the stage's sampled queries."""
    import gc
    import glob

    from lsdscc.testset import assemble as ts
    from lsdscc.testset.retrieval import QuerySearcher

    retrieval, _, sampling = testset_cli_configs(args)
    from lsdscc.testset.build_cache import cache_for

    # the corpus before leak removal, as the stage read it (its snapshot in the build cache)
    cache = cache_for(folder)
    files = {"all": sorted(glob.glob(os.path.join(cache, "corpus-full-*", "single_turn", "**", "*.parquet"),
                                     recursive=True))}
    queries, _ = ts.queries_of_tables(ts.read_table(paths) for paths in files.values())
    sample = ts.sample_queries(queries, sampling)
    to_expand = [(qid, queries[qid].text) for ids in sample.values() for qid in ids]
    index_dirs = [d for d in glob.glob(os.path.join(cache, "lucene-index-*")) if os.path.isdir(d)
                  and not d.endswith((".tmp", ".collection"))]
    if len(index_dirs) != 1:
        raise SystemExit(f"bench_testset: expected one Lucene index in {cache}, found {index_dirs}")
    searcher = QuerySearcher(index_dirs[0], retrieval)
    try:
        start = time.perf_counter()
        lucene = searcher.search(to_expand)
        lucene_seconds = time.perf_counter() - start
    finally:
        searcher.close()
        del searcher
        gc.collect()  # release Java proxies on the main thread (see pipelines.lsdscc.testset._retrieve)
    lucene = {qid: [h.query_id for h in hits] for qid, hits in lucene.items()}

    start = time.perf_counter()
    scan = TfidfScan(((qid, queries[qid].text) for qid in sorted(queries)), retrieval.analyzer)
    build_seconds = time.perf_counter() - start
    start = time.perf_counter()
    base = scan.search(to_expand, retrieval.depth)
    search_seconds = time.perf_counter() - start

    overlaps = [len(set(lucene[q]) & set(base[q])) / len(lucene[q]) for q, _ in to_expand if lucene[q]]
    return {
        "queries": len(to_expand), "indexed_queries": len(queries), "depth": retrieval.depth,
        "similarity": retrieval.similarity, "analyzer": retrieval.analyzer,
        "lucene_search_seconds": round(lucene_seconds, 3),
        "baseline": "scipy.sparse TF-IDF scan (ClassicSimilarity-like), all indexed queries",
        "baseline_build_seconds": round(build_seconds, 2), "baseline_search_seconds": round(search_seconds, 3),
        "ratio_lucene_over_baseline": round(lucene_seconds / search_seconds, 3) if search_seconds else None,
        "top_overlap_mean": round(sum(overlaps) / len(overlaps), 4) if overlaps else None,
        "top_overlap_min": round(min(overlaps), 4) if overlaps else None,
        "top_sets_identical": sum(1 for q, _ in to_expand if lucene[q] and set(lucene[q]) == set(base[q])),
        "vocabulary": len(scan.vocab),
    }


def testset_cli_configs(args):
    from pipelines.lsdscc import testset_options as testset_cli

    return testset_cli.configs_from_args(args)


def _generate_apart(folder: str, pairs: int) -> tuple:
    """:func:`generate` in a child process (its memory is not the stage's peak); returns
    ``(sizes, wall seconds)``."""
    import subprocess

    start = time.perf_counter()
    done = subprocess.run([sys.executable, os.path.abspath(__file__), "--generate-into", folder, "--pairs", str(pairs)],
                          check=True, stdout=subprocess.PIPE, text=True)
    return json.loads(done.stdout), time.perf_counter() - start


def _parser():
    from pipelines.lsdscc import testset_options as testset_cli

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--keep", metavar="FOLDER", help="generate into FOLDER and keep it (default: a temp folder)")
    parser.add_argument("--no-search-baseline", dest="search_baseline", action="store_false",
                        help="skip the search baseline (Lucene vs a plain TF-IDF scan, run after the stage)")
    parser.add_argument("--overlap", metavar="N[,N...]",
                        help="instead of the stage: the re-ranked neighbours of Doc2Vec models trained on N "
                             "sentences vs the full-corpus model (benchmarks/testset_overlap.py)")
    parser.add_argument("--overlap-processes", metavar="P[,P...]", default="",
                        help="with --overlap: also the full corpus trained (twice) by the data-parallel prototype "
                             "with P processes (lsdscc/testset/doc2vec_parallel.py)")
    parser.add_argument("--overlap-parts", metavar="P[,P...]", default="",
                        help="with --overlap: also the full corpus in P independent parts trained in P processes "
                             "and in one: --doc2vec-parts P (lsdscc/testset/doc2vec_parts.py); P:dims or P:epochs: "
                             "every part on all the sentences with its share of the dimensions or epochs (tried)")
    corpus = parser.add_mutually_exclusive_group()
    corpus.add_argument("--dataset", metavar="FOLDER",
                        help="instead of generated pairs: a corpus folder written by `multiref lsdscc build "
                             "--skip-testset`, copied and run through `multiref lsdscc testset` in a child process "
                             "(process tree measured step by step)")
    corpus.add_argument("--realistic-month", metavar="N", type=_positive,
                        help="instead of generated pairs: a realistic month of N r/movies comments "
                             "(lsdscc.synthetic.dumps, as `bench_corpus.py --text realistic`), built with `multiref "
                             "lsdscc build --skip-testset`, then as --dataset (with --keep: the month is reused)")
    parser.add_argument("--month-seed", type=int, default=7, help="--realistic-month's seed (default 7, bench_corpus's)")
    parser.add_argument("--build-flags", default="", metavar="FLAGS",
                        help='--realistic-month: flags added to the build (e.g. "--workers 1"; default: its defaults)')
    parser.add_argument("--sample-interval", type=float, default=0.5, metavar="SECONDS",
                        help="--dataset/--realistic-month: how often the process tree's memory and CPU are sampled")
    parser.add_argument("--generate-into", metavar="FOLDER", help=argparse.SUPPRESS)  # the generator's child process
    testset_cli.add_testset_arguments(parser)
    return parser


def _overlap(folder: str, args, sizes: dict) -> dict:
    from benchmarks.testset_overlap import neighbour_overlap
    from pipelines.lsdscc import testset_options as testset_cli

    samples = [int(n) for n in args.overlap.split(",") if n]
    processes = [int(n) for n in args.overlap_processes.split(",") if n]
    start, cpu = time.perf_counter(), cpu_seconds()
    workdir = tempfile.mkdtemp(prefix="bench-overlap-")
    try:
        report = neighbour_overlap(folder, testset_cli.configs_from_args(args), samples, workdir,
                                   processes=processes, parts=_parts_specs(args.overlap_parts))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return {"corpus": sizes, "overlap": report, "seconds": round(time.perf_counter() - start, 1),
            "cpu_seconds": round(cpu_seconds() - cpu, 1)}


def _parts_specs(text: str) -> list:
    """``--overlap-parts``: ``P`` or ``P:SPLIT`` (data, dims, epochs), comma-separated."""
    specs = []
    for item in filter(None, text.split(",")):
        count, _, split = item.partition(":")
        specs.append((int(count), split or "data"))
    return specs


def _positive(text: str) -> int:
    try:
        value = int(text.replace("_", ""))
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"wants a positive comment count, got {text!r}")
    return value


def main(argv=None) -> int:
    from pipelines.lsdscc import testset_options as testset_cli
    from pipelines.lsdscc.testset import run_testset_stage

    parser = _parser()
    args = parser.parse_args(argv)
    if args.generate_into:
        print(json.dumps(generate(args.generate_into, args.pairs)))
        return 0
    if args.dataset is not None or args.realistic_month is not None:
        from benchmarks.testset_corpus import check_corpus_args, corpus_stage

        check_corpus_args(parser, args)
        report = corpus_stage(args, testset_cli.configs_from_args(args))
        print(json.dumps(report, indent=2, sort_keys=True))
        return 0
    folder = args.keep or tempfile.mkdtemp(prefix="bench-testset-")
    if args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    load = os.getloadavg()
    sizes, generate_seconds = _generate_apart(folder, args.pairs)
    print(f"generated {sizes} in {generate_seconds:.1f}s (child process) -> {folder}", file=sys.stderr)
    if args.overlap is not None:
        report = _overlap(folder, args, sizes)
    else:
        cpu = cpu_seconds()
        counts = run_testset_stage(folder, testset_cli.testset_job(args))
        report = _stage_report(folder, args, sizes, counts, cpu_seconds() - cpu)  # before the baseline's CPU
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB -> MB (Linux)
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # the largest child (the generator too)
    report.update(generate_seconds=round(generate_seconds, 1), peak_rss_mb=round(peak),
                  largest_child_peak_rss_mb=round(children), cpus=os.cpu_count(),
                  load_average_before=[round(x, 2) for x in load],
                  load_average_after=[round(x, 2) for x in os.getloadavg()])
    print(json.dumps(report, indent=2, sort_keys=True))
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(folder.rstrip("/") + ".cache", ignore_errors=True)
    return 0


def _stage_report(folder: str, args, sizes: dict, counts: dict, cpu_seconds: float) -> dict:
    """The stage's times (wall per step, CPU in all), options, counts, and the search baseline."""
    from pipelines.lsdscc import testset_options as testset_cli

    retrieval, d2v, sampling = testset_cli.configs_from_args(args)
    report = {
        "corpus": sizes, "stage_seconds": counts["seconds"], "stage_cpu_seconds": round(cpu_seconds, 1),
        "options": {"retrieval": retrieval.options(), "doc2vec": d2v.options(), "sampling": sampling.options(),
                    "lucene_threads": retrieval.threads, "jvm_heap": retrieval.heap},
        "counts": {k: v for k, v in counts.items() if k not in ("seconds", "beam_counters")},
    }
    if args.search_baseline:
        base = report["search_baseline"] = search_baseline(folder, args)
        print(f"bench_testset: search of {base['queries']} sampled queries over {base['indexed_queries']:,} indexed "
              f"queries (top {base['depth']}): Lucene {base['lucene_search_seconds']:.2f} s (stage's step "
              f"{counts['seconds'].get('lucene_search', float('nan')):.2f} s with opening) vs TF-IDF scan baseline "
              f"{base['baseline_search_seconds']:.2f} s (+ {base['baseline_build_seconds']:.1f} s to build its matrix): "
              f"ratio {base['ratio_lucene_over_baseline']}x; mean top-{base['depth']} overlap "
              f"{base['top_overlap_mean']}", file=sys.stderr)
    return report


if __name__ == "__main__":
    sys.exit(main())
