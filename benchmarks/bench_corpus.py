"""Benchmark: the LSDSCC dump reader and the whole corpus build, each against a plain baseline.

Generates Pushshift-shaped monthly dumps itself (zstd JSON lines, seeded): comments carry
the real 2019 comment field set (46 keys, as listed in the Arctic Shift schema statistics of
RC_2019-06, ``../shared/data/reddit-samples``), about 1.2 KB a line. Then, in one run:

a. reader: a file of ``--lines`` comments of which 0.1% are r/movies;
   ``lsdscc.corpus.sources.read_items(path, subreddits=("movies",))`` consuming every item, vs the
   baseline "decode the same file and byte-filter its lines" (zstd stream reader, split
   lines, ``b'"movies"' in line``, no JSON). Goal: at most 2.5x (issue 34). The exact path
   (``read_items(path)``, every line parsed) is printed beside it.
b. build: a month of ``--comments`` r/movies comments (threads from lsdscc.corpus.sample_gen, with
   their submissions) built by ``pipelines.lsdscc.corpus.run`` in a child process, vs the
   baseline "decode the same files and json-parse every line". Goal: at most 5x (issue 34). The build's
   CPU seconds and peak RSS are the child's own (``os.wait4``, one child at a time), so the
   baseline's memory and earlier builds do not mix in. Goal: at most 0.75 GB (768 MB).
c. with ``--sizes 300000,1000000``: each size is generated and built as in b, and the memory
   slope (peak RSS difference / comment difference, KB per comment) between the first and
   the last size is printed. Goal: at most 0.3 KB (benchmark text), 1.0 KB (realistic).
d. with ``--workers-compare "FLAGS"`` (e.g. ``"--workers 2"``): the largest month is built a
   second time with those flags added; the ratio of the run() times (second / first), both
   CPU times and whether every output file has the same sha256. Goal: at most 0.60x, same
   bytes. The first build is one process (``--workers 1``) unless the extra arguments say
   otherwise.

e. with ``--parquet``: the reader's file and each month are rewritten as Parquet shards laid out
   as the Hugging Face mirror open-index/arctic (``benchmarks/parquet_input.py``) and read /
   built again: the Parquet reader's time on the same lines (same counts), and the build's
   times and peak RSS against the JSON-lines build of the same records (same dataset bytes).

The month's comment bodies (``--text``): ``benchmark`` (default), the thread generator's short
templated sentences; ``realistic``, bodies with real Reddit lengths (median about 30 words, a
long tail to 10,000 characters), markdown, links, mentions, numbers and emoji
(``lsdscc/synthetic/text.py``). Both are seeded and byte-reproducible.

Timings are in-process wall-clock seconds (best of ``--repeat`` for the reader part); the
build's figure is the ``run()`` call inside the child, its whole-process time is printed
too. Extra arguments go to the pipeline (e.g. Beam flags)::

    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_corpus.py            # 400k lines, 300k comments
    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_corpus.py --quick    # 100k lines, 30k comments
    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_corpus.py --lines 1200000 --json out/bench_corpus.json
    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_corpus.py --only build --text realistic
    PYTHONPATH=$PWD .venv/bin/python benchmarks/bench_corpus.py --only build --sizes 300000,1000000 \
        --workers-compare "--workers 2"
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import shlex
import shutil
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from lsdscc.synthetic.dumps import baseline_filter, baseline_parse, write_mixed, write_month  # noqa: E402
from multiref.util.measure import differing_files, load_average, measure_build, memory_slope_kb, output_digests  # noqa: E402
from parquet_input import dataset_files_differ, shard_count, to_arctic  # noqa: E402

GOAL_READER, GOAL_BUILD, GOAL_RSS_MB, GOAL_WORKERS = 2.5, 5.0, 768, 0.60  # issue 34
GOAL_SLOPE_KB = {"benchmark": 0.3, "realistic": 1.0}  # peak RSS per extra comment (issue: a third of today's)
SCRIPT = os.path.abspath(__file__)


def timed_reader(path: str, subreddits) -> tuple[dict, float]:
    """``read_items`` (JSON lines or Parquet) consumed to the end: (counts by item kind, lines; seconds)."""
    from lsdscc.corpus.sources import read_items

    t0 = time.perf_counter()
    counts = {"ok": 0, "rejected": 0, "skipped": 0}
    for item in read_items(path, subreddits=subreddits):
        counts[item[0]] += item[1] if item[0] == "skipped" else 1
    return counts, time.perf_counter() - t0


def child_build(folder: str, out: str, extra: list) -> dict:
    """In the child process: ``pipelines.lsdscc.corpus.run`` on ``folder``, timed in-process.

    One process (``--workers 1``) unless ``extra`` names the workers: the job's ``--workers auto``
    would take one per core for months of 100 MB or more, and the baseline is one process."""
    from pipelines.lsdscc.corpus import run

    kwargs = {"quiet": True} if "quiet" in inspect.signature(run).parameters else {}
    from pipelines.lsdscc import options as lsdscc_options

    has_workers = hasattr(lsdscc_options, "resolve_workers")  # not on commits before --workers
    if has_workers and not any(a.split("=")[0] == "--workers" for a in extra):
        extra = ["--workers", "1"] + list(extra)  # later flags (--workers-compare's) win
    t0 = time.perf_counter()
    summary = run(["--input", folder, "--output", out] + extra, **kwargs)
    seconds = time.perf_counter() - t0
    splits = summary.get("splits", {}) if isinstance(summary, dict) else {}
    rows = {c: sum(v.values()) for c, v in splits.items() if isinstance(v, dict)}
    return {"seconds": seconds, "rows": rows}


def measure_reader(path: str, repeat: int, exact: bool) -> dict:
    """Reader vs decode + byte-filter, interleaved, best of ``repeat`` (wall and CPU seconds, each the
    best of its runs); optionally the exact path."""
    base, fast, counts = [], [], None  # (wall, CPU) seconds of each run
    for _ in range(repeat):
        cpu = time.process_time()
        kept, seconds = baseline_filter(path)
        base.append((seconds, time.process_time() - cpu))
        cpu = time.process_time()
        counts, seconds = timed_reader(path, ("movies",))
        fast.append((seconds, time.process_time() - cpu))
    result = {"baseline_seconds": min(w for w, _ in base), "reader_seconds": min(w for w, _ in fast),
              "baseline_cpu_seconds": min(c for _, c in base), "reader_cpu_seconds": min(c for _, c in fast),
              "counts": counts, "byte_filter_hits": kept}
    if exact:
        result["exact_counts"], result["exact_seconds"] = timed_reader(path, None)
    return result


def _row(what, seconds, baseline, goal=None, unit="s") -> str:
    """A table row: result, baseline, ratio (two decimals below 1x), goal and verdict."""
    ratio = seconds / baseline if baseline else float("nan")
    verdict = "" if goal is None else ("met" if ratio <= goal else "missed")
    goal_text = "-" if goal is None else f"<= {goal:g}x"
    return f"| {what} | {seconds:,.2f} {unit} | {baseline:,.2f} {unit} | {ratio:.{2 if ratio < 1 else 1}f}x | {(goal_text + ' ' + verdict).strip()} |"


def report(args, reader: dict | None, builds: list) -> None:
    print("\n| measure | result | baseline (same run) | ratio | goal |\n| --- | --- | --- | --- | --- |")
    if reader:
        print(_row(f"reader, {args.lines:,} lines, 0.1% r/movies (vs decode + byte-filter)",
                   reader["reader_seconds"], reader["baseline_seconds"], GOAL_READER))
        print(_row("reader: CPU seconds of the same runs, best of each (steadier than wall time on a shared machine)",
                   reader["reader_cpu_seconds"], reader["baseline_cpu_seconds"], GOAL_READER))
        if "exact_seconds" in reader:
            print(_row("reader, exact path: every line parsed (context)", reader["exact_seconds"],
                       reader["baseline_seconds"]))
    for build in builds:
        report_build(args, build)
    if len(builds) > 1:
        slope, goal = memory_slope_kb(builds[0], builds[-1]), GOAL_SLOPE_KB[args.text]
        print(f"| memory slope, {builds[0]['comments']:,} -> {builds[-1]['comments']:,} comments ({args.text} "
              f"text): peak RSS per extra comment | {slope:.3f} KB | - | - | <= {goal:g} KB "
              f"{'met' if slope <= goal else 'missed'} |")
    for build in builds:
        if "workers" in build:
            report_workers(build)
        if "parquet" in build:
            report_parquet(build)
    if reader and "parquet_seconds" in reader:
        print(_row(f"reader, the same {args.lines:,} lines as one Parquet file (vs decode + byte-filter of the .zst)",
                   reader["parquet_seconds"], reader["baseline_seconds"]))


def report_build(args, build: dict) -> None:
    """Rows for one size: run() and whole-process seconds, CPU seconds, peak RSS."""
    what = f"build, {build['comments']:,} r/movies comments ({args.text} text)"
    print(_row(f"{what}: run() (vs decode + json-parse)", build["seconds"], build["baseline_seconds"], GOAL_BUILD))
    print(_row(f"{what}: whole child process (imports included)", build["process_seconds"],
               build["baseline_seconds"]))
    print(_row(f"{what}: CPU of the child, user + sys (vs the baseline's CPU)", build["cpu_seconds"],
               build["baseline_cpu_seconds"]))
    verdict = "met" if build["peak_rss_mb"] <= GOAL_RSS_MB else "missed"
    print(f"| {what}: peak RSS (child ru_maxrss) | {build['peak_rss_mb']:,.0f} MB | - | - | "
          f"<= {GOAL_RSS_MB:,} MB {verdict} |")


def report_workers(build: dict) -> None:
    """Rows for the second build with other Beam flags: time ratio, CPU, same bytes or not."""
    second = build["workers"]
    what = f"build, {build['comments']:,} comments, `{' '.join(second['flags'])}` vs one process"
    print(_row(f"{what}: run()", second["seconds"], build["seconds"], GOAL_WORKERS))
    print(_row(f"{what}: CPU of the child (its waited-for workers included)", second["cpu_seconds"],
               build["cpu_seconds"]))
    print(f"| {what}: peak RSS | {second['peak_rss_mb']:,.0f} MB | {build['peak_rss_mb']:,.0f} MB | "
          f"{second['peak_rss_mb'] / build['peak_rss_mb']:.2f}x | - |")
    same = "yes" if second["identical"] else f"NO ({len(second['differing'])} files differ: {second['differing'][:5]})"
    print(f"| {what}: identical output bytes ({second['files']} files, sha256) | {same} | - | - | same bytes |")


def compare_workers(folder: str, out: str, extra: list, flags: list) -> dict:
    """The same build again with ``flags`` added; its figures and whether every output file is the same."""
    second_out = out + "-workers"
    second = measure_build(SCRIPT, folder, second_out, extra + flags, ROOT)
    first_digests, second_digests = output_digests(out), output_digests(second_out)
    differing = differing_files(first_digests, second_digests)
    shutil.rmtree(second_out, ignore_errors=True)
    print(f"second build with {' '.join(flags)}: run() {second['seconds']:.1f}s, CPU {second['cpu_seconds']:.1f}s, "
          f"{'same bytes' if not differing else f'{len(differing)} files differ'}", flush=True)
    return {"flags": flags, "identical": not differing, "differing": differing, "files": len(first_digests), **second}


def compare_parquet(month: list, folder: str, out: str, extra: list) -> dict:
    """``--parquet``: the same month as Parquet shards (open-index/arctic layout) built the same
    way; its figures and whether the dataset files (single_turn, multi_turn) are the same bytes."""
    t0 = time.perf_counter()
    shards = [to_arctic(path, folder) for path in month]
    print(f"rewrote the month as Parquet in {time.perf_counter() - t0:.0f}s "
          f"({sum(os.path.getsize(p) for p in shards) / 2**20:,.1f} MB)", flush=True)
    second_out, first = out + "-parquet", output_digests(out)
    if not any(a.split("=")[0] == "--num-shards" for a in extra):  # auto counts from the input's size: give
        extra = extra + ["--num-shards", str(shard_count(first))]  # the JSON build's (it changes files, not rows)
    second = measure_build(SCRIPT, folder, second_out, extra, ROOT)
    differing = dataset_files_differ(first, output_digests(second_out))
    shutil.rmtree(second_out, ignore_errors=True)
    shutil.rmtree(folder, ignore_errors=True)
    print(f"build from Parquet: run() {second['seconds']:.1f}s, CPU {second['cpu_seconds']:.1f}s, peak RSS "
          f"{second['peak_rss_mb']:,.0f} MB, {'same dataset bytes' if not differing else f'{differing} differ'}",
          flush=True)
    return {"identical": not differing, "differing": differing, **second}


def report_parquet(build: dict) -> None:
    """Rows for the Parquet build of the same month: times against the JSON-lines build."""
    second = build["parquet"]
    what = f"build, {build['comments']:,} comments, Parquet input vs the same records as JSON lines"
    print(_row(f"{what}: run()", second["seconds"], build["seconds"]))
    print(_row(f"{what}: whole child process", second["process_seconds"], build["process_seconds"]))
    print(_row(f"{what}: CPU of the child", second["cpu_seconds"], build["cpu_seconds"]))
    print(f"| {what}: peak RSS | {second['peak_rss_mb']:,.0f} MB | {build['peak_rss_mb']:,.0f} MB | "
          f"{second['peak_rss_mb'] / build['peak_rss_mb']:.2f}x | - |")
    same = "yes" if second["identical"] else f"NO ({second['differing']})"
    print(f"| {what}: identical single_turn / multi_turn bytes | {same} | - | - | same bytes |")


def build_size(args, tmp: str, comments: int, extra: list, compare: bool) -> dict:
    """Generates a month of ``comments``, builds it in a child, times the baseline on the same files
    (and with ``compare``, builds it again with ``--workers-compare``'s flags)."""
    folder, out = month_folder(args, tmp, comments), os.path.join(tmp, f"out-{comments}")
    month = generated_month(args, folder, comments)
    build = measure_build(SCRIPT, folder, out, extra, ROOT)
    build["comments"] = comments
    build["records"], build["baseline_seconds"], build["baseline_cpu_seconds"] = baseline_parse(month)
    print(f"build: run() {build['seconds']:.1f}s, CPU {build['cpu_seconds']:.1f}s, peak RSS "
          f"{build['peak_rss_mb']:,.0f} MB, rows {build['rows']}; decode + json-parse {build['records']:,} records "
          f"{build['baseline_seconds']:.1f}s", flush=True)
    if compare:
        build["workers"] = compare_workers(folder, out, extra, shlex.split(args.workers_compare))
    if args.parquet:
        build["parquet"] = compare_parquet(month, os.path.join(tmp, f"arctic-{comments}"), out, extra)
    if not args.months:
        shutil.rmtree(folder, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    return build


def month_folder(args, tmp: str, comments: int) -> str:
    """Where the month of ``comments`` is generated: the run's temporary folder, or ``--months``."""
    if not args.months:
        return os.path.join(tmp, f"month-{comments}")
    return os.path.join(args.months, f"month-{comments}-{args.text}-seed{args.seed}")


def generated_month(args, folder: str, comments: int) -> list:
    """The month's dump files: generated, or (``--months``) reused when an earlier run finished
    generating the same comments, text and seed there (its ``DONE`` file says so)."""
    done, recipe = os.path.join(folder, "DONE"), f"comments={comments} text={args.text} seed={args.seed}\n"
    paths = [os.path.join(folder, name) for name in ("RS_2019-06.zst", "RC_2019-06.zst")]
    if os.path.exists(done) and open(done, encoding="utf-8").read() == recipe and all(map(os.path.exists, paths)):
        print(f"reusing the month of {comments:,} r/movies comments in {folder}", flush=True)
        return paths
    foreign = set(os.listdir(folder)) - {"DONE", *map(os.path.basename, paths)} if os.path.isdir(folder) else ()
    if foreign:
        raise SystemExit(f"bench_corpus.py: error: {folder} holds files it did not write ({', '.join(sorted(foreign))})")
    if os.path.exists(done):
        os.remove(done)  # (a month being rewritten is not reused if this run stops before the end)
    t0 = time.perf_counter()
    month = write_month(folder, comments, seed=args.seed, text=args.text)
    print(f"generated a month of {comments:,} r/movies comments ({args.text} text) in {time.perf_counter() - t0:.0f}s "
          f"({sum(os.path.getsize(p) for p in month) / 2**20:,.1f} MB zstd); load average {load_average()}", flush=True)
    if args.months:
        with open(done, "w", encoding="utf-8") as marker:
            marker.write(recipe)
    return month


def run_reader(args, tmp: str) -> dict:
    """Part a: the reader on a mixed file vs decode + byte-filter."""
    path = os.path.join(tmp, "RC_mixed.zst")
    t0 = time.perf_counter()
    movies = write_mixed(path, args.lines, seed=args.seed)
    print(f"generated {args.lines:,} comment lines ({movies:,} r/movies) in {time.perf_counter() - t0:.0f}s "
          f"({os.path.getsize(path) / 2**20:,.1f} MB zstd)", flush=True)
    reader = measure_reader(path, args.repeat, args.exact)
    counts = reader["counts"]
    if counts["ok"] != movies or counts["ok"] + counts["skipped"] != args.lines:
        raise SystemExit(f"reader counts are wrong: {counts}, expected {movies:,} kept of {args.lines:,}")
    print(f"reader: {counts['ok']:,} kept, {counts['skipped']:,} skipped; "
          f"byte filter hits {reader['byte_filter_hits']:,}", flush=True)
    if args.parquet:
        shard = to_arctic(path, os.path.join(tmp, "arctic-mixed"))
        pq_counts, reader["parquet_seconds"] = min((timed_reader(shard, ("movies",)) for _ in range(args.repeat)),
                                                   key=lambda r: r[1])
        if pq_counts != counts:
            raise SystemExit(f"the Parquet reader's counts differ: {pq_counts} vs {counts}")
        print(f"Parquet reader: {reader['parquet_seconds']:.2f}s ({os.path.getsize(shard) / 2**20:,.1f} MB)", flush=True)
    return reader


def _sizes(text: str) -> list:
    """``--sizes`` ("300000,1000000") as increasing comment counts."""
    try:
        sizes = [int(part.replace("_", "")) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--sizes wants comma-separated comment counts, got {text!r}") from None
    if not sizes or any(n <= 0 for n in sizes) or sizes != sorted(set(sizes)):
        raise argparse.ArgumentTypeError(f"--sizes wants increasing positive comment counts, got {text!r}")
    return sizes


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("--lines", type=int, default=400_000, help="reader file: comment lines (default 400,000)")
    parser.add_argument("--comments", type=int, default=300_000, help="build: r/movies comments (default 300,000)")
    parser.add_argument("--sizes", type=_sizes, default=None,
                        help="build several months, e.g. 300000,1000000 (overrides --comments); with two or more, "
                             "the memory slope between the first and the last is printed")
    parser.add_argument("--workers-compare", default=None, metavar="FLAGS",
                        help='build the largest month again with these job or Beam flags added (e.g. "--workers 2"; '
                             'the first build is one process): time ratio and identical bytes')
    parser.add_argument("--parquet", action="store_true",
                        help="also rewrite the reader's file and each month as Parquet shards (open-index/arctic "
                             "layout) and time them: same counts, same dataset bytes")
    parser.add_argument("--quick", action="store_true", help="100,000 lines and 30,000 comments")
    parser.add_argument("--repeat", type=int, default=2, help="reader timings: best of N (default 2)")
    parser.add_argument("--no-exact", dest="exact", action="store_false", help="skip the exact-path reader timing")
    parser.add_argument("--only", choices=("reader", "build"), default=None)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--text", choices=("benchmark", "realistic"), default="benchmark",
                        help="comment bodies of the build's month: the thread generator's short templated ones "
                             "(default) or realistic ones (real Reddit lengths, markdown, links, mentions)")
    parser.add_argument("--json", default=None, help="also write the results here")
    parser.add_argument("--months", default=None, metavar="DIR",
                        help="keep the generated months in DIR and reuse them in later runs with the same size, "
                             "--text and --seed (generating 3M realistic comments takes 5-10 minutes)")
    parser.add_argument("--child-build", nargs=2, default=None, help=argparse.SUPPRESS)
    return parser.parse_known_args(argv)


def main(argv=None) -> int:
    args, extra = parse_args(argv)
    if args.child_build:
        print(json.dumps(child_build(*args.child_build, extra)))
        return 0
    if args.quick:
        args.lines, args.comments = 100_000, 30_000
    sizes = args.sizes or [args.comments]
    reader, builds, load = None, [], {"start": load_average()}
    with tempfile.TemporaryDirectory(prefix="bench-corpus-") as tmp:
        if args.only != "reader":
            builds = [build_size(args, tmp, n, extra, bool(args.workers_compare) and n == sizes[-1]) for n in sizes]
        if args.only != "build":
            reader = run_reader(args, tmp)
    load["end"] = load_average()
    report(args, reader, builds)
    print(f"\nload average (1, 5, 15 min): {load['start']} at the start, {load['end']} at the end")
    if args.json:
        os.makedirs(os.path.dirname(args.json) or ".", exist_ok=True)
        with open(args.json, "w") as fh:
            json.dump({"lines": args.lines, "sizes": sizes, "text": args.text, "load_average": load,
                       "reader": reader, "builds": builds}, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
