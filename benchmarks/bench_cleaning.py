"""Benchmark: cleaning plus tokenization of one comment (``lsdscc.corpus.cleaning.clean_and_tokenize``).

Generates N Reddit-like comments (the bodies ``lsdscc.corpus.sample_gen`` writes, joined 1 to 6 at a
time with hand-written fragments full of markdown, links, numbers, emoticons, elongations,
contractions, quotes and non-ASCII punctuation) and times, in this one process:

- ``baseline``: ``clean_and_tokenize`` as it was at commit e46b6c5 (before the text
  conventions and the fast path), loaded from git into a temporary module;
- ``lsdscc``: today's default (``convention="lsdscc"``, the fused fast path, half of it in C:
  ``lsdscc/corpus/_cleaning_native.c``);
- ``lsdscc-python``: the same with the C extension off (what runs where it was not built);
- ``treebank``: today's ``convention="treebank"`` (the baseline's rules, periods split off).

``--text realistic`` times bodies of ``lsdscc/synthetic/text.py`` instead (real comment
lengths, markup, links, emoji: what ``bench_corpus.py --text realistic`` builds).

Each is timed ``--repeat`` times, interleaved, and the best run counts. Prints comments/s,
the ratio to the baseline, and how many comments the treebank convention tokenizes exactly
as the baseline did (the rest differ only by the periods it now splits off).

    .venv/bin/python benchmarks/bench_cleaning.py                 # 20,000 comments
    .venv/bin/python benchmarks/bench_cleaning.py --comments 50000 --repeat 5 --json out/bench_cleaning.json

Target (issue 10, item 5): the default at least 3x the baseline (a third of its time).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from lsdscc.synthetic.text import generate_comments  # noqa: E402

BASELINE_COMMIT = "e46b6c5"


def _git_module(name: str, path: str, folder: str, replace=()):
    """``path`` at :data:`BASELINE_COMMIT` loaded as module ``name`` (``replace``: text substitutions)."""
    source = subprocess.run(["git", "-C", ROOT, "show", f"{BASELINE_COMMIT}:{path}"],
                            check=True, capture_output=True, text=True).stdout
    for old, new in replace:
        source = source.replace(old, new)
    file = os.path.join(folder, name + ".py")
    with open(file, "w", encoding="utf-8") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, file)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_baseline():
    """``clean_and_tokenize`` of commit :data:`BASELINE_COMMIT` (then ``lsdscc/cleaning.py``, with
    its emoticon table ``lsdscc/emoticons.py``), or None (with the reason)."""
    folder = tempfile.mkdtemp(prefix="bench_cleaning_")
    try:
        _git_module("baseline_emoticons", "lsdscc/emoticons.py", folder)
        module = _git_module("baseline_cleaning", "lsdscc/cleaning.py", folder,
                             [("from lsdscc.emoticons import", "from baseline_emoticons import")])
    except (OSError, subprocess.CalledProcessError) as exc:
        detail = getattr(exc, "stderr", "") or str(exc)
        return None, f"git show {BASELINE_COMMIT}:lsdscc/cleaning.py failed: {detail.strip()}"
    return module.clean_and_tokenize, None


def _python_only(text: str) -> list:
    """The default convention with the C extension off."""
    from lsdscc.corpus import cleaning

    return cleaning.clean_and_tokenize(text, convention="lsdscc", native=False)


def _time(fn, comments) -> float:
    start = time.perf_counter()
    for text in comments:
        fn(text)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--comments", type=int, default=20_000, help="comments to generate (default 20,000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each, best counts (default 3)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--text", choices=("benchmark", "realistic"), default="benchmark",
                        help="benchmark: sample bodies and fragments (default); realistic: lsdscc/synthetic/text.py")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args(argv)

    from lsdscc.corpus import cleaning
    from lsdscc.corpus.cleaning import clean_and_tokenize

    if args.text == "realistic":
        from lsdscc.synthetic.text import RealisticText

        gen = RealisticText(args.seed)
        comments = [gen.body() for _ in range(args.comments)]
    else:
        comments = generate_comments(args.comments, args.seed)
    chars = sum(map(len, comments)) / len(comments)
    print(f"{len(comments):,} comments, mean {chars:.0f} characters, {sum(c.isascii() for c in comments):,} ASCII-only")
    baseline, why = load_baseline()
    runs = {"lsdscc": lambda t: clean_and_tokenize(t, convention="lsdscc"),
            "lsdscc-python": _python_only,
            "treebank": lambda t: clean_and_tokenize(t, convention="treebank")}
    if cleaning.native_extension() is None:
        print("the C extension is not built (pip install -e . with a C compiler): lsdscc is the Python path too")
    if baseline is None:
        print(f"no baseline: {why}; timing the current implementation only")
    else:
        runs = {"baseline": baseline, **runs}
    for fn in runs.values():  # warm up: compile regexes, import NLTK
        fn(comments[0])
    best = {name: float("inf") for name in runs}
    for _ in range(args.repeat):
        for name, fn in runs.items():
            best[name] = min(best[name], _time(fn, comments))
    result = {"comments": len(comments), "text": args.text, "mean_chars": round(chars, 1), "repeat": args.repeat,
              "baseline_commit": BASELINE_COMMIT if baseline else None, "per_second": {}, "ratio": {}}
    for name, seconds in best.items():
        rate = len(comments) / seconds
        result["per_second"][name] = round(rate)
        line = f"{name:13s} {rate:10,.0f} comments/s  {1e6 * seconds / len(comments):7.1f} us/comment"
        if baseline is not None and name != "baseline":
            result["ratio"][name] = round(best["baseline"] / seconds, 2)
            line += f"  {result['ratio'][name]:.2f}x the baseline"
        print(line)
    if baseline is not None:
        same = sum(baseline(t) == clean_and_tokenize(t, convention="treebank") for t in comments)
        result["treebank_same_as_baseline"] = same
        print(f"treebank convention == baseline tokens on {same:,} of {len(comments):,} comments "
              "(the others: periods ending a word are now split off)")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
