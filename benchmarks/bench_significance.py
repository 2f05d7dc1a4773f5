"""Benchmark: paired bootstrap over 10 systems on multi-reference DailyDialog, multiref vs sacrebleu.

The test set is the multi-reference DailyDialog test set (Gupta et al. 2019: 6,740 contexts, 5
references each; ``$MULTIREF_DATA/multiref-dailydialog/multireftest.json``). Ten systems are
generated deterministically (``--seed``): system k answers each context with one of its
references or, with probability ``0.01 k``, with a response of another context, then drops or
replaces tokens with probability ``0.2 + 0.002 k`` (so neighbouring systems differ by small
margins, some not significant), and pads an output shorter than 4 tokens with random words (on such outputs NLTK's
BLEU, ours, divides by ``max(1, n-gram count)`` where sacrebleu divides by the count). References and outputs are written as plain text files (one line per context, the
form both tools read) and scored as whole processes in the same run:

- ``multiref score -r refs.jsonl -i sys0.txt ... sys9.txt -m bleu -m maxbleu -m mds -m pds
  -m distinct --paired-bs --paired-bs-n 1000`` (corpus BLEU-4, the MaxBLEU-style metrics with
  every reference its own group, Distinct-2; every metric resampled 1,000 times, each system
  against the first);
- ``sacrebleu ref0.txt ... ref4.txt -i sys0.txt ... sys9.txt --paired-bs --paired-bs-n 1000
  -tok none -s none -m bleu``: BLEU alone, the same BLEU (pre-tokenized text, no smoothing);
- for reference, ``multiref score`` with ``-m bleu`` alone.

Goal: all of multiref's metrics with resampling in less wall time than sacrebleu's BLEU alone.
The script also checks that the BLEU scores agree (to 1e-9) and prints the BLEU p-values of
both tools side by side (same seed 12345, same resamples: they should be equal).

    python benchmarks/bench_significance.py                  # $MULTIREF_DATA/multiref-dailydialog/...
    python benchmarks/bench_significance.py path/to/multireftest.json --systems 10 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_metrics import _median_run, bytecode_env  # noqa: E402


def default_path() -> str | None:
    root = os.environ.get("MULTIREF_DATA")
    return os.path.join(root, "multiref-dailydialog", "multireftest.json") if root else None


def load_contexts(path: str) -> list:
    """``(id, query, [5 references])`` per context, in file order."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                continue
            record = json.loads(line)
            for turn, utterance in enumerate(record["dialogue"]):
                if utterance.get("responses"):
                    refs = [" ".join(r.split()) for r in utterance["responses"]]
                    out.append((f"{record.get('index', len(out))}_{turn}", " ".join(utterance["text"].split()), refs))
    return out


def make_system(contexts: list, k: int, seed: int) -> list:
    """System ``k``'s one output per context (see the module docstring)."""
    rng = random.Random(seed * 1000 + k)
    vocab = sorted({t for _, _, refs in contexts for r in refs for t in r.split()})
    out = []
    for _, _, refs in contexts:
        source = rng.choice(refs) if rng.random() >= 0.01 * k else rng.choice(rng.choice(contexts)[2])
        tokens = []
        for tok in source.split():
            r = rng.random()
            if r < 0.2 + 0.002 * k:
                if r < (0.2 + 0.002 * k) / 2:
                    continue
                tok = rng.choice(vocab)
            tokens.append(tok)
        while len(tokens) < 4:  # >= 4 tokens: NLTK's BLEU (max(1, count) denominators) = sacrebleu's
            tokens.append(rng.choice(vocab))
        out.append(" ".join(tokens))
    return out


def write_inputs(folder: str, contexts: list, systems: list) -> tuple:
    """``(refs.jsonl, [ref0.txt..ref4.txt], [sys0.txt..])``: every reference its own group."""
    refs_jsonl = os.path.join(folder, "refs.jsonl")
    with open(refs_jsonl, "w", encoding="utf-8") as fh:
        for cid, query, refs in contexts:
            fh.write(json.dumps({"id": cid, "query": query, "groups": [[r] for r in refs]}) + "\n")
    ref_files = []
    for j in range(len(contexts[0][2])):
        ref_files.append(os.path.join(folder, f"ref{j}.txt"))
        with open(ref_files[-1], "w", encoding="utf-8") as fh:
            fh.writelines(refs[j] + "\n" for _, _, refs in contexts)
    sys_files = []
    for k, outputs in enumerate(systems):
        sys_files.append(os.path.join(folder, f"sys{k}.txt"))
        with open(sys_files[-1], "w", encoding="utf-8") as fh:
            fh.writelines(o + "\n" for o in outputs)
    return refs_jsonl, ref_files, sys_files


def run_all(refs_jsonl, ref_files, sys_files, n: int, repeats: int, env: dict) -> dict:
    ours = [sys.executable, "-m", "multiref_cli", "score", "-r", refs_jsonl, "-i", *sys_files, "--paired-bs",
            "--paired-bs-n", str(n), "--format", "json", "--quiet"]
    sacrebleu = shutil.which("sacrebleu", path=os.path.dirname(sys.executable)) or shutil.which("sacrebleu")
    theirs = [sacrebleu, *ref_files, "-i", *sys_files, "--paired-bs", "--paired-bs-n", str(n), "-tok", "none",
              "-s", "none", "-m", "bleu", "-f", "json"]
    full = ours + ["-m", "bleu", "-m", "maxbleu", "-m", "mds", "-m", "pds", "-m", "distinct"]
    found = {}
    for name, argv in (("multiref all", full), ("sacrebleu bleu", theirs), ("multiref bleu", ours + ["-m", "bleu"])):
        wall, cpu, out = _median_run(argv, repeats, env)
        found[name] = {"wall": wall, "cpu": cpu, "out": json.loads(out)}
    return found


def compare_bleu(found: dict) -> list:
    """Per system: (our BLEU x 100, sacrebleu's BLEU, our p, sacrebleu's p)."""
    ours = found["multiref all"]["out"]["systems"]
    theirs = found["sacrebleu bleu"]["out"]
    rows = []
    for mine, other in zip(ours, theirs):
        m, t = mine["metrics"]["bleu"], other["BLEU"]
        rows.append((m["score"] * 100, t["score"], m["p_value"], t.get("p_value")))
    return rows


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", default=default_path(), help="multireftest.json")
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=13, help="seed of the generated systems")
    parser.add_argument("--repeats", type=int, default=1, help="whole-process runs of each command (median)")
    args = parser.parse_args(argv)
    if not args.path or not os.path.isfile(args.path):
        print("bench_significance: multireftest.json was not found: give its path, or set MULTIREF_DATA to a folder "
              f"with multiref-dailydialog/multireftest.json (looked for: {args.path or '$MULTIREF_DATA unset'})",
              file=sys.stderr)
        return 2
    contexts = load_contexts(args.path)
    systems = [make_system(contexts, k, args.seed) for k in range(args.systems)]
    print(f"{len(contexts)} contexts, {len(contexts[0][2])} references each, {args.systems} systems, "
          f"{args.resamples} paired-bootstrap resamples, seed {args.seed}")
    with tempfile.TemporaryDirectory() as folder:
        env = bytecode_env(folder)
        found = run_all(*write_inputs(folder, contexts, systems), args.resamples, args.repeats, env)
    for name, f in found.items():
        print(f"  {name:15s} {f['wall']:7.2f}s wall {f['cpu']:7.2f}s CPU (median of {args.repeats})")
    print("  BLEU per system: multiref x100 / sacrebleu, p-value multiref / sacrebleu")
    rows = compare_bleu(found)
    for k, (ours, theirs, p_ours, p_theirs) in enumerate(rows):
        print(f"    sys{k}: {ours:8.4f} / {theirs:8.4f}   p {p_ours if p_ours is not None else '-'} / "
              f"{p_theirs if p_theirs is not None else '-'}")
    ratio = found["sacrebleu bleu"]["wall"] / found["multiref all"]["wall"]
    cpu = found["sacrebleu bleu"]["cpu"] / found["multiref all"]["cpu"]
    print(f"multiref (BLEU, MaxBLEU, MDS, PDS, Distinct-2, all resampled) runs at {ratio:.2f}x the speed of "
          f"sacrebleu's BLEU alone in wall time, {cpu:.2f}x in CPU time (goal: > 1)")
    bad = [k for k, (o, t, _, _) in enumerate(rows) if abs(o - t) > 1e-9]
    if bad:
        print(f"bench_significance: BLEU differs from sacrebleu's for systems {bad}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
