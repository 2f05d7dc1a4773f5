"""Benchmark: MaxBLEU + MDS + PDS on the public LSDSCC test set, multiref vs the straightforward way.

Generates N hypotheses per query (seeded: references sampled from the test set, half from the
query's own groups, then perturbed by dropping, replacing and swapping tokens), then computes
MaxBLEU, MDS and PDS (docs/algorithms.md#3-lsdscc-metrics)

- with multiref (``get_metric("maxbleu"|"mds"|"pds", smoothing="nltk1", brevity_penalty=True)``:
  each group's clipping table counted once per query, each hypothesis once), and
- the straightforward way: NLTK's ``sentence_bleu(group, hypothesis, smoothing_function=
  SmoothingFunction().method1)`` for every (hypothesis, group) pair, argmax (first on ties), means.

The BLEU configuration is one NLTK can express (BLEU-4, smoothing nltk1 = method1, brevity
penalty on); the LSDSCC scorer's default ``add1`` has no NLTK equivalent. The numbers must be
identical (to 1e-12); the script prints both times and the speed-up (target: >= 20x).

It measures twice, in the same run: in process (the two computations only), and as whole
processes (wall time of ``python -m multiref_cli score ...`` on files against a process that runs
the NLTK loop, each including Python start-up, imports and reading the files; the median of
``--repeats`` runs; both load compiled bytecode, as an installed package does: see
:func:`bytecode_env`). The whole-process figure is the one a user sees.

    python benchmarks/bench_metrics.py                       # $MULTIREF_DATA/lsdscc/test.group.json
    python benchmarks/bench_metrics.py path/to/test.group.json --hyps-per-query 50 --seed 13
    python benchmarks/bench_metrics.py --synthetic           # no data: a generated set of the same shape
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
import warnings


def default_path() -> str | None:
    root = os.environ.get("MULTIREF_DATA")
    return os.path.join(root, "lsdscc", "test.group.json") if root else None


def synthetic_groups(queries: int = 299, seed: int = 7) -> dict:
    """A generated test set shaped like LSDSCC's (1 to 5 groups, 1 to 15 references, 3 to 20 tokens)."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(3000)]
    zipf = [1.0 / (i + 1) for i in range(len(vocab))]

    def sentence():
        return " ".join(rng.choices(vocab, zipf, k=rng.randint(3, 20)))

    out = {}
    for q in range(queries):
        n_groups = rng.randint(1, 5)
        sizes = [1] * n_groups
        for _ in range(rng.randint(0, 15 - n_groups)):
            sizes[rng.randrange(n_groups)] += 1
        out[f"query {q} " + sentence()] = [[sentence() for _ in range(n)] for n in sizes]
    return out


def write_inputs(folder: str, groups: dict, hyps: dict) -> tuple:
    """The test set (grouped JSON) and the outputs (JSON lines) as ``multiref score`` reads them."""
    refs, outputs = os.path.join(folder, "test.group.json"), os.path.join(folder, "outputs.jsonl")
    with open(refs, "w", encoding="utf-8") as fh:
        json.dump({q: {str(i): g for i, g in enumerate(gs)} for q, gs in groups.items()}, fh)
    with open(outputs, "w", encoding="utf-8") as fh:
        for q, h in hyps.items():
            fh.write(json.dumps({"query": q, "hypotheses": h}) + "\n")
    return refs, outputs


def _median_run(argv: list, repeats: int, env: dict | None = None) -> tuple:
    """``(median wall seconds, median CPU seconds, stdout of the last run)`` of a whole process."""
    import resource
    import statistics
    import subprocess

    walls, cpus, out = [], [], ""
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(argv, capture_output=True, text=True, check=True, env=env)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        out = proc.stdout
    return statistics.median(walls), statistics.median(cpus), out


def bytecode_env(folder: str) -> dict:
    """The environment of both whole-process runs: modules load from compiled bytecode, as from
    an installed package (pip compiles NLTK's and multiref's modules; an editable checkout
    with ``PYTHONDONTWRITEBYTECODE`` set would recompile multiref's on every run, about
    0.02 s). multiref's bytecode is written under ``folder``, not into the source tree."""
    import subprocess

    import multiref

    env = dict(os.environ, PYTHONPYCACHEPREFIX=os.path.join(folder, "pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    root = os.path.dirname(os.path.dirname(multiref.__file__))  # every package of the project, as pip compiles them
    packages = [os.path.join(root, p) for p in ("multiref", "multiref_cli", "lsdscc", "pipelines", "dailydialog_pp")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *packages], env=env, check=True)
    return env


def whole_process(refs: str, outputs: str, repeats: int) -> dict:
    """Wall and CPU time of ``multiref score`` and of the NLTK loop, each as a whole process."""
    env = bytecode_env(os.path.dirname(refs))
    score_argv = [sys.executable, "-m", "multiref_cli", "score", "-r", refs, "-H", outputs, "-m", "maxbleu", "-m", "mds",
                  "-m", "pds", "--bleu-smoothing", "nltk1", "--brevity-penalty", "--format", "json", "--quiet"]
    naive_argv = [sys.executable, os.path.abspath(__file__), "--naive-only", refs, outputs]
    t_ours, c_ours, out_ours = _median_run(score_argv, repeats, env)
    t_naive, c_naive, out_naive = _median_run(naive_argv, repeats, env)
    ours = {k: v["score"] for k, v in json.loads(out_ours).items()}
    return {"multiref": t_ours, "naive": t_naive, "multiref_cpu": c_ours, "naive_cpu": c_naive, "ours": ours,
            "theirs": json.loads(out_naive)}


def naive_only(refs: str, outputs: str) -> int:
    """The NLTK loop as its own process: read the files, score, print the scores as JSON."""
    groups = load_groups(refs)
    hyps = {}
    with open(outputs, encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            hyps[record["query"]] = record["hypotheses"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        print(json.dumps(straightforward(groups, hyps)))
    return 0


def load_groups(path: str) -> dict:
    with open(path, encoding="utf-8") as fh:
        data = json.load(fh)
    return {query: [list(refs) for refs in groups.values()] for query, groups in data.items()}


def perturb(tokens: list, vocab: list, rng: random.Random) -> list:
    out = []
    for tok in tokens:
        r = rng.random()
        if r < 0.1:
            continue  # drop
        out.append(rng.choice(vocab) if r < 0.25 else tok)  # replace
    if len(out) > 2 and rng.random() < 0.3:
        i = rng.randrange(len(out) - 1)
        out[i], out[i + 1] = out[i + 1], out[i]
    if rng.random() < 0.2:
        out = out[: rng.randint(1, max(1, len(out)))]  # truncate (exercises the brevity penalty)
    return out


def make_hypotheses(groups: dict, per_query: int, seed: int) -> dict:
    rng = random.Random(seed)
    all_refs = [r for gs in groups.values() for g in gs for r in g]
    vocab = sorted({t for r in all_refs for t in r.split()})
    hyps = {}
    for query, gs in groups.items():
        own = [r for g in gs for r in g]
        hyps[query] = [" ".join(perturb((rng.choice(own) if rng.random() < 0.5 else rng.choice(all_refs)).split(),
                                        vocab, rng)) for _ in range(per_query)]
    return hyps


def with_multiref(groups: dict, hyps: dict) -> dict:
    from multiref.metrics import Item, get_metric
    from multiref.metrics.lsdscc import _cached_alignment

    _cached_alignment.cache_clear()
    items = [Item(q, hyps[q], groups=gs) for q, gs in groups.items()]
    options = {"order": 4, "smoothing": "nltk1", "brevity_penalty": True}
    return {name: get_metric(name, **options).score_items(items).score for name in ("maxbleu", "mds", "pds")}


def straightforward(groups: dict, hyps: dict) -> dict:
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    smoothing = SmoothingFunction().method1
    maxbleu, mds, pds = [], [], []
    for query, gs in groups.items():
        tok_groups = [[r.split() for r in g] for g in gs]
        aligned, best = set(), []
        for h in hyps[query]:
            toks = h.split()
            values = [sentence_bleu(g, toks, smoothing_function=smoothing) for g in tok_groups]
            k = max(range(len(values)), key=lambda i: (values[i], -i))  # first group on ties
            aligned.add(k)
            best.append(values[k])
        maxbleu.append(sum(best) / len(best))
        mds.append(len(aligned) / len(gs))
        pds.append(sum(len(gs[k]) for k in aligned) / sum(len(g) for g in gs))
    n = len(groups)
    return {"maxbleu": sum(maxbleu) / n, "mds": sum(mds) / n, "pds": sum(pds) / n}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default=default_path(), help="LSDSCC test.group.json")
    parser.add_argument("--hyps-per-query", type=int, default=50)
    parser.add_argument("--queries", type=int, default=None, help="only the first N queries (quick runs)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--synthetic", action="store_true", help="a generated test set of the same shape")
    parser.add_argument("--repeats", type=int, default=3, help="whole-process runs of each side (median)")
    parser.add_argument("--naive-only", nargs=2, metavar=("REFS", "OUTPUTS"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.naive_only:
        return naive_only(*args.naive_only)
    if args.synthetic:
        args.path = None
    elif not args.path or not os.path.isfile(args.path):
        print("bench_metrics: the LSDSCC test set was not found: give its path, or set MULTIREF_DATA to a folder "
              f"with lsdscc/test.group.json (looked for: {args.path or '$MULTIREF_DATA unset'})", file=sys.stderr)
        return 2
    groups = load_groups(args.path) if args.path else synthetic_groups()
    if args.queries:
        groups = dict(list(groups.items())[: args.queries])
    hyps = make_hypotheses(groups, args.hyps_per_query, args.seed)
    n_pairs = sum(len(hyps[q]) * len(gs) for q, gs in groups.items())
    print(f"{len(groups)} queries, {sum(len(h) for h in hyps.values())} hypotheses, {n_pairs} (hypothesis, group) "
          f"pairs; BLEU-4, smoothing nltk1 (NLTK method1), brevity penalty on; seed {args.seed}")

    import nltk.translate.bleu_score  # noqa: F401  (imports outside the timed parts)

    import numpy  # noqa: F401  (used by multiref for many hypotheses per query)

    import multiref.metrics.lsdscc  # noqa: F401

    wall, cpu = time.perf_counter(), time.process_time()
    ours = with_multiref(groups, hyps)
    t_ours, c_ours = time.perf_counter() - wall, time.process_time() - cpu
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wall, cpu = time.perf_counter(), time.process_time()
        naive = straightforward(groups, hyps)
        t_naive, c_naive = time.perf_counter() - wall, time.process_time() - cpu

    for name in ("maxbleu", "mds", "pds"):
        print(f"  {name:8s} multiref {ours[name]:.12f}   straightforward {naive[name]:.12f}")
    print(f"multiref:        {t_ours:7.3f}s wall  {c_ours:7.3f}s CPU")
    print(f"straightforward: {t_naive:7.3f}s wall  {c_naive:7.3f}s CPU  (NLTK sentence_bleu per pair)")
    print(f"speed-up: {t_naive / t_ours:.1f}x wall, {c_naive / c_ours:.1f}x CPU (target >= 20x)")
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        whole = whole_process(*write_inputs(folder, groups, hyps), args.repeats)
    print(f"whole process (median of {args.repeats}): multiref score {whole['multiref']:7.3f}s wall "
          f"{whole['multiref_cpu']:7.3f}s CPU   NLTK loop {whole['naive']:7.3f}s wall {whole['naive_cpu']:7.3f}s CPU")
    print(f"whole-process speed-up: {whole['naive'] / whole['multiref']:.1f}x wall, "
          f"{whole['naive_cpu'] / whole['multiref_cpu']:.1f}x CPU (target >= 20x)")
    mismatch = [n for n in ours if abs(ours[n] - naive[n]) > 1e-12]
    mismatch += [f"{n} (whole process)" for n in ours if abs(whole["ours"][n] - whole["theirs"][n]) > 1e-12]
    if mismatch:
        print(f"bench_metrics: numbers differ for {', '.join(mismatch)}", file=sys.stderr)
        return 1
    print("numbers identical to 1e-12")
    return 0


if __name__ == "__main__":
    sys.exit(main())
