"""Benchmark of ``multiref augment`` (docs/algorithms.md section 2) on DailyDialog.

Augments the DailyDialog test contexts (config ``contexts``, split ``test``: 6,740 contexts)
from DailyDialog train (``contexts``/``train``: 76,052 contexts, one per utterance after a
dialogue's first) with the command's defaults, in this process, and reports the time of each
step (read, Lucene indexing, top-k search, Doc2Vec training, re-ranking and assembly) and
the peak RSS of the process (the JVM runs inside it).

Baseline, in the same process and first: the Lucene part alone (read both splits, index the
corpus, search every test context: :func:`pipelines.augment.job.retrieve`), with the peak RSS
after it. What the full run adds to that baseline is Doc2Vec (training and re-ranking) and
the assembly and writing.

    multiref dailydialog build --output out/dd --dailydialog DD/   # once
    python benchmarks/bench_augment.py --dataset out/dd --output out/dd-augmented

Options: ``--top-k``, ``--threshold``, ``--max-candidates``, ``--seed``, ``--context-turns``,
``--doc2vec-workers`` as the command's. ``--output`` keeps the augmented folder (the
DailyDialog experiment of docs/augment.md reads it); without it, a temporary folder is used.

Measured (2 cores shared with other jobs): see docs/augment.md#benchmark.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _peak_mb() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)  # kB -> MB (Linux)


def baseline(corpus, test, config, retrieval) -> dict:
    """The Lucene part alone: read, index, search. Returns its seconds and peak RSS."""
    from lsdscc.testset import augment as aug
    from pipelines.augment.job import read_items, retrieve

    start = time.perf_counter()
    (corpus_items, _, _), (test_items, _, _) = read_items(corpus, test)
    queries, _ = aug.corpus_queries(corpus_items, config.context_turns)
    seconds = {"read": time.perf_counter() - start}
    workdir = tempfile.mkdtemp(prefix="bench-augment-")
    try:
        hits = retrieve(queries, test_items, config, retrieval, workdir, seconds)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    seconds["total"] = time.perf_counter() - start
    return {"seconds": {k: round(v, 2) for k, v in seconds.items()}, "peak_rss_mb": _peak_mb(),
            "corpus_contexts": len(queries), "test_items": len(test_items),
            "retrieved_neighbours": sum(len(h) for h in hits.values())}


def main(argv=None) -> int:
    from pipelines.augment.job import Source, run_augment
    from pipelines.augment.options import configs_from_args

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True, help="a DailyDialog build (config contexts)")
    parser.add_argument("--output", help="keep the augmented folder here (default: a temporary folder)")
    for flag, kind, default in (("--top-k", int, 100), ("--threshold", float, 0.9), ("--max-candidates", int, 15),
                                ("--seed", int, 1), ("--context-turns", int, 1), ("--doc2vec-workers", int, 1),
                                ("--min-candidates", int, 5), ("--floor-threshold", float, 0.5)):
        parser.add_argument(flag, type=kind, default=default)
    args = parser.parse_args(argv)
    defaults = dict(similarity="tfidf", bm25_k1=1.2, bm25_b=0.75, lucene_analyzer="english", jvm_heap="2g",
                    doc2vec_epochs=10, doc2vec_vector_size=100)
    config, retrieval, d2v = configs_from_args(argparse.Namespace(**vars(args), **defaults))
    corpus = Source(args.dataset, "contexts", "train")
    test = Source(args.dataset, "contexts", "test", "test")
    load = os.getloadavg()
    report = {"baseline_lucene_only": baseline(corpus, test, config, retrieval)}
    output = args.output or tempfile.mkdtemp(prefix="bench-augment-out-")
    shutil.rmtree(output, ignore_errors=True)
    os.makedirs(output)
    start = time.perf_counter()
    counts = run_augment(corpus, test, output, config, retrieval, d2v)
    report["augment"] = {"wall_seconds": round(time.perf_counter() - start, 2), "seconds": counts.pop("seconds"),
                         "peak_rss_mb": _peak_mb(), "counts": counts}
    report.update(options={"augment": config.options(), "retrieval": retrieval.options(), "doc2vec": d2v.options()},
                  load_average_before=[round(x, 2) for x in load], cpus=os.cpu_count(), output=output)
    if not args.output:
        shutil.rmtree(output, ignore_errors=True)
    print(json.dumps(report, indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
