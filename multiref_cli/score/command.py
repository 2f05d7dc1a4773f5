"""``multiref score``: score system outputs against multi-reference test sets.

Examples::

    multiref score --references test.group.json --hypotheses system.jsonl
    multiref score --references out/lsdscc --config test_grouped --split test \\
        --hypotheses system.jsonl --metric maxbleu --metric mds --metric pds --format json
    multiref score --references multiref_dd.jsonl --hypotheses outputs.jsonl \\
        --metric bleu --bleu-order 2 --bleu-smoothing nltk1 --aggregate max --per-item items.jsonl

    multiref score -r test.group.json -H lsdscc_hyps.txt --eos '</s>'      # the public scorer's format
    multiref score -r refs.jsonl -i base.txt new.txt --paired-bs --confidence --format markdown
    generate.py | multiref score -r refs.jsonl                              # standard input

References: LSDSCC grouped JSON, JSON lines, or a dataset folder (see
:mod:`multiref.metrics.references`); systems: JSON lines or plain text (see
:mod:`multiref.metrics.score_inputs`); several systems and significance: :mod:`multiref_cli.score.report`,
:mod:`multiref_cli.score.stats` and :mod:`multiref.metrics.significance`. Each metric gets only the options its
``__init__`` accepts
and keeps its own defaults for the options not given; the output shows every metric's
signature, which records all options that change the number.
"""

from __future__ import annotations

import argparse
import csv
import gc
import io
import json
import operator
import sys
import time

from multiref.metrics.defaults import CORRECTIONS, DEFAULT_AR, DEFAULT_BS, DEFAULT_SEED
from multiref.metrics.lsdscc_ties import DEFAULT_TIES, TIES
from multiref.util.defaults import TOKENIZER
from multiref.util.options import number_type

DEFAULT_GROUPED = ("maxbleu", "mds", "pds")
DEFAULT_FLAT = ("bleu",)
FORMATS = ("table", "json", "csv", "markdown", "latex", "html")
#: upper bound of --paired-bs-n and --paired-ar-n
MAX_RESAMPLES = 1_000_000
#: hypotheses with at most this many tokens are reported as very short
SHORT_TOKENS = 2


def bleu_weights(text: str) -> tuple:
    """An argparse ``type`` for ``--bleu-weights``: at most ``MAX_ORDER`` non-negative finite
    numbers, not all zero (checked as :func:`multiref.metrics.bleu.resolve_weights` does)."""
    import math

    from multiref.metrics.base import MAX_ORDER

    parts = text.replace(",", " ").split()
    if len(parts) > MAX_ORDER:
        raise argparse.ArgumentTypeError(f"at most {MAX_ORDER} weights (one per n-gram order), got {len(parts)}")
    try:
        weights = tuple(float(w) for w in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got {text[:40]!r}") from None
    if not weights:
        raise argparse.ArgumentTypeError("no weights given")
    if any(not math.isfinite(w) or w < 0 for w in weights) or not any(weights):
        raise argparse.ArgumentTypeError(f"weights must be non-negative finite numbers, not all zero; got {text!r}")
    return weights


def register(parser: argparse.ArgumentParser) -> None:
    from multiref.metrics.base import AGGREGATES, MAX_ORDER
    from multiref.util.options import add_arguments
    from multiref.util.tables import ColumnNames
    from multiref_cli.common import tokenizer_choices

    parser.add_argument("--references", "-r", required=True, metavar="PATH",
                        help="LSDSCC grouped JSON {query: {group_id: [refs]}}, JSON lines with id and "
                             "references/groups, a .csv/.tsv/.parquet/.jsonl/.json table (a references list, one "
                             "column per reference, or a response), or a dataset folder (ours, or any parquet folder)")
    parser.add_argument("--hypotheses", "-H", "-i", nargs="+", action="extend", metavar="PATH",
                        help="one or more systems (the first is the baseline), '-' or nothing for standard input: "
                             "JSON lines (id or query, and hypotheses or hypothesis), or plain text with one line "
                             "per reference item in the references' order (see --eos); UTF-8, a BOM is accepted")
    parser.add_argument("--eos", metavar="SEP",
                        help="plain text: the separator of several outputs on one line (the public LSDSCC "
                             "scorer's --eos, e.g. '</s>'); default: one output per line")
    parser.add_argument("--config", help="dataset folder only: the config to score against (e.g. test_grouped)")
    parser.add_argument("--split", help="dataset folder only: the split (default: the only one, else test)")
    parser.add_argument("--max-references", type=number_type(int, 1, None), metavar="N",
                        help="score against each item's first N references, in their stored order (default: all; "
                             "the signature records maxrefs:N)")
    add_arguments(parser, ColumnNames)
    parser.add_argument("--metric", "-m", action="append", metavar="NAME",
                        help="metric to compute, repeatable (default: maxbleu, mds, pds for grouped references, "
                             "bleu otherwise); see `multiref metrics list`")
    parser.add_argument("--tokenizer", choices=tokenizer_choices(), default=TOKENIZER, metavar="NAME",
                        help="tokenizer: %(choices)s (default: whitespace, the public LSDSCC scorer's)")
    parser.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=False,
                        help="lowercase before tokenizing (default: no)")
    add_bleu_options(parser)
    parser.add_argument("--ties", choices=TIES, default=DEFAULT_TIES,
                        help="maxbleu/mds/pds when an output ties between groups: lsdscc = the public LSDSCC scorer "
                             "(groups by numeric id, 'null' last; its floating-point sums and means), first = the "
                             "first group in file order (groups compared exactly); auto (default, as the library) = "
                             "lsdscc with the public scorer's BLEU (add1, no brevity penalty), else first")
    parser.add_argument("--aggregate", choices=AGGREGATES,
                        help="multi-reference aggregation for the metrics that offer it")
    parser.add_argument("--vectors", metavar="PATH", help="word vectors for the embedding metrics (gensim .kv or word2vec)")
    parser.add_argument("--distinct-order", type=number_type(int, 1, MAX_ORDER), metavar="N",
                        help=f"n for distinct/distinct_per_utterance (default 2) and ead (default 1), 1 to {MAX_ORDER}")
    parser.add_argument("--ead-vocab-size", type=number_type(int, 1, 10**12), metavar="V",
                        help="ead: the vocabulary size V of its expectation (default: the distinct n-grams of the "
                             "test set's references)")
    parser.add_argument("--format", choices=FORMATS, default="table",
                        help="output format (default: table); markdown and latex mark significant differences")
    add_statistics_options(parser)
    parser.add_argument("--per-item", metavar="PATH",
                        help="write each item's scores (JSON lines, or CSV if PATH ends in .csv); with several "
                             "systems, one row per system and item")
    parser.add_argument("--output", "-o", metavar="PATH", help="write the scores here instead of standard output")
    parser.add_argument("--partial", action="store_true",
                        help="score only the reference items that have outputs (default: all must have one)")
    parser.add_argument("--quiet", "-q", action="store_true", help="nothing on standard error but errors")
    parser.set_defaults(func=handle)


def add_bleu_options(parser: argparse.ArgumentParser) -> None:
    """The BLEU family's options (order, weights, smoothing, convention, brevity penalty) and --meteor-impl."""
    from multiref.metrics.base import MAX_ORDER
    from multiref.metrics.bleu import ALL_SMOOTHINGS, CONVENTIONS
    from multiref.metrics.meteor import METEOR_IMPLS

    parser.add_argument("--bleu-order", type=number_type(int, 1, MAX_ORDER), metavar="N",
                        help=f"BLEU family: max n-gram order, 1 to {MAX_ORDER} (default 4)")
    parser.add_argument("--bleu-weights", type=bleu_weights, metavar="W1,W2,..",
                        help=f"BLEU family: custom n-gram weights, at most {MAX_ORDER} weights (override the order)")
    parser.add_argument("--bleu-smoothing", choices=ALL_SMOOTHINGS,
                        help="BLEU family smoothing (default: none for bleu, add1 for maxbleu/mds/pds); nltk0..nltk7 "
                             "and add1 under --bleu-convention nltk, exp/floor/add-k (sacrebleu's) under sacrebleu")
    parser.add_argument("--bleu-convention", choices=CONVENTIONS, default="nltk",
                        help="bleu, delta_bleu, self_bleu: whose BLEU formulas (default: nltk, the papers'; sacrebleu = "
                             "sacrebleu's corpus_bleu, nlgeval = nlg-eval's pycocoevalcap Bleu); maxbleu/mds/pds keep "
                             "the public LSDSCC scorer's")
    parser.add_argument("--meteor-impl", choices=METEOR_IMPLS, default="nltk",
                        help="meteor: nltk (default; NLTK's, needs WordNet) or 1.5 (the METEOR 1.5 jar with its "
                             "paraphrase table, as nlg-eval; needs pip install 'multiref-dialog[meteor]')")
    parser.add_argument("--brevity-penalty", dest="brevity_penalty", action=argparse.BooleanOptionalAction,
                        default=None, help="BLEU family brevity penalty (default: on for bleu, off for maxbleu/mds/pds)")


def add_statistics_options(parser: argparse.ArgumentParser) -> None:
    """--confidence, --paired-bs/--paired-ar and their counts, --seed, --verbose."""
    parser.add_argument("--confidence", action="store_true",
                        help="a 95%% interval per metric and system (percentile bootstrap over the items; "
                             "corpus Distinct-n: delete-one jackknife)")
    test = parser.add_mutually_exclusive_group()
    test.add_argument("--paired-bs", action="store_true",
                      help="p-value of each system against the first one (paired bootstrap over items)")
    test.add_argument("--paired-ar", action="store_true",
                      help="p-value of each system against the first one (approximate randomization over items)")
    parser.add_argument("--paired-bs-n", type=number_type(int, 1, MAX_RESAMPLES), default=DEFAULT_BS, metavar="N",
                        help=f"bootstrap resamples, for --paired-bs and --confidence (default {DEFAULT_BS:,})")
    parser.add_argument("--paired-ar-n", type=number_type(int, 1, MAX_RESAMPLES), default=DEFAULT_AR, metavar="N",
                        help=f"approximate randomization trials (default {DEFAULT_AR:,})")
    parser.add_argument("--seed", type=number_type(int, 0, 2 ** 63 - 1), default=DEFAULT_SEED,
                        help=f"seed of the resampling (default {DEFAULT_SEED}, sacrebleu's)")
    parser.add_argument("--correction", choices=CORRECTIONS, default=CORRECTIONS[0],
                        help="with --paired-bs/--paired-ar and several systems: holm adjusts each metric's p-values "
                             "for the number of systems compared with the baseline (Holm 1979; default: none)")
    parser.add_argument("--verbose", action="store_true",
                        help="BLEU and deltaBLEU: n-gram precisions, brevity penalty and lengths")


def metric_options(name: str, args) -> tuple:
    """``(options, skipped)``: the CLI options metric ``name`` accepts, and notes on ignored ones."""
    from multiref.metrics import accepted_options, metric_class

    names = accepted_options(name)
    bleu_family = "smoothing" in names
    candidates = {
        "tokenizer": args.tokenizer,
        "lowercase": args.lowercase,
        "smoothing": args.bleu_smoothing,
        "weights": args.bleu_weights,
        "brevity_penalty": args.brevity_penalty,
        "vectors": args.vectors,
        "convention": getattr(args, "bleu_convention", None),
        "impl": getattr(args, "meteor_impl", None),
        "order": args.bleu_order if bleu_family else (args.distinct_order if name.startswith("distinct") or name == "ead"
                                                      else None),
        "vocab_size": getattr(args, "ead_vocab_size", None),
    }
    options = {k: v for k, v in candidates.items() if v is not None and k in names}
    if "ties" in names:
        options["ties"] = getattr(args, "ties", DEFAULT_TIES)
    skipped = []
    if bleu_family and "convention" not in names and getattr(args, "bleu_convention", "nltk") != "nltk":
        skipped.append(f"{name} keeps the public LSDSCC scorer's BLEU (--bleu-convention applies to bleu, "
                       "delta_bleu and self_bleu)")
    if args.aggregate is not None and "aggregate" in names:
        allowed = getattr(metric_class(name), "aggregates", ())  # not a recall wrapper: those take no aggregate
        if args.aggregate in allowed:
            options["aggregate"] = args.aggregate
        else:
            skipped.append(f"{name} does not take --aggregate {args.aggregate} (it uses {', '.join(allowed)})")
    return options, skipped


def build_metrics(names, args, log) -> list:
    from multiref.util.errors import UserError
    from multiref.metrics import get_metric

    metrics = []
    for name in names:
        try:
            options, skipped = metric_options(name, args)
            for note in skipped:
                log(f"note: {note}")
            metrics.append(get_metric(name, **options))
        except UserError:
            raise
        except (ValueError, TypeError, ImportError) as exc:
            raise UserError(f"--metric {name}: {exc}") from None
    return metrics


def degenerate_counts(items, tokenize) -> tuple:
    """``(empty, short, total)``: hypotheses with no token, with 1..SHORT_TOKENS tokens, all
    (the tokens counted in C loops: ``map``, ``Counter``)."""
    from collections import Counter

    sizes = Counter(map(len, map(tokenize, (h for item in items for h in item.hypotheses))))
    return sizes[0], sum(sizes[n] for n in range(1, SHORT_TOKENS + 1)), sum(sizes.values())


def degenerate_warning(items, metrics, args, explain: bool = True) -> str | None:
    """A warning naming the counts of empty and very short hypotheses and the settings under
    which they score high (add-one smoothing without brevity penalty, the public LSDSCC
    scorer's BLEU: an empty output gets 1.0 against every group); None when there are none."""
    from multiref.metrics.tokenizers import get_tokenizer

    if (args.tokenizer or "whitespace") == "whitespace":  # the first SHORT_TOKENS + 1 tokens tell: split no further
        tokenize = operator.methodcaller("split", None, SHORT_TOKENS)
    else:
        tokenize = get_tokenizer(args.tokenizer, bool(args.lowercase))
    rewarding = [m.name for m in metrics
                 if getattr(m, "smoothing", None) == "add1" and not getattr(m, "brevity_penalty", True)]
    if not rewarding:  # short outputs only matter to add-one smoothing without a brevity penalty
        return None
    empty, short, total = degenerate_counts(items, tokenize)
    if not empty and not short:
        return None
    if not explain:  # a later system of the same run: the explanation is on the first warning
        return f"{empty} of {total} hypotheses are empty and {short} have 1-{SHORT_TOKENS} tokens (see above)."
    return (f"{empty} of {total} hypotheses are empty and {short} have 1-{SHORT_TOKENS} tokens. "
            "Add-one smoothing without a brevity penalty (smooth:add1|bp:no, the public LSDSCC scorer's BLEU and "
            "the maxbleu/mds/pds default) scores an empty hypothesis 1.0 against any references and a one-word "
            f"one 1.0 when its word is in them (0.84 when it is not); here: {', '.join(rewarding)}. Check the "
            "outputs, or compare with --bleu-smoothing nltk1 --brevity-penalty.")


def _format(rows, fmt: str) -> str:
    """One system without statistics: ``rows`` of ``(metric, score or None, signature, details or None)``."""
    if fmt == "json":
        out = {}
        for name, score, signature, details in rows:
            out[name] = {"score": score, "signature": signature, **({"details": details} if details else {})}
        return json.dumps(out, indent=2) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["metric", "score", "signature"])
        for name, score, signature, _ in rows:
            writer.writerow([name, "" if score is None else repr(score), signature])
        return buf.getvalue()
    width = max(len("metric"), *(len(r[0]) for r in rows))
    lines = [f"{'metric':<{width}}  {'score':>8}  signature"]
    for name, score, signature, details in rows:
        lines.append(f"{name:<{width}}  {'null' if score is None else f'{score:.4f}':>8}  {signature}")
        if details:
            lines.append(f"{'':<{width}}  precisions {'/'.join(f'{p:.4f}' for p in details['precisions'])} "
                         f"bp {details['bp']:.4f} ratio {details['ratio']} hyp_len {details['hyp_len']} "
                         f"ref_len {details['ref_len']}")
    return "\n".join(lines) + "\n"


def _write_per_item(path: str, systems, scores) -> None:
    """Each item's scores, one row per item (per system and item, with a ``system`` field, when
    several systems are scored)."""
    rows = []
    for (name, pairs, _), results in zip(systems, scores):
        for i, (hyp, ref) in enumerate(pairs):
            row = {"system": name} if len(systems) > 1 else {}
            row["id"] = ref.id
            if ref.query is not None and ref.query != ref.id:
                row["query"] = ref.query
            row["hypotheses"] = len(hyp.hypotheses)
            for r in results:
                row[r.name] = r.per_item[i] if i < len(r.per_item) else None
            rows.append(row)
    from multiref.output.file_output import write_atomically

    def write(fh):
        if path.endswith(".csv"):
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else ["id"], lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
        else:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")

    write_atomically(path, write)


def _single_threaded_blas() -> None:
    """One OpenBLAS thread unless the user chose otherwise: numpy's bundled OpenBLAS starts its
    thread pool when numpy is imported (about 50 ms of a whole ``multiref score`` run), and
    scoring does no large linear algebra (embedding metrics take dot products of single vectors)."""
    import os

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def hypothesis_paths(args) -> tuple:
    """``(paths, stdin)``: the systems to score (``--hypotheses``, or standard input when it is
    piped) and the bytes of standard input when a system is ``-`` (None otherwise)."""
    import io as _io

    from multiref.util.errors import UsageError

    paths = list(args.hypotheses) if args.hypotheses else ["-"]
    if "-" not in paths:
        return paths, None
    if sys.stdin is None or sys.stdin.isatty():
        raise UsageError("no hypotheses: give --hypotheses FILE (or several), or pipe them on standard input")
    data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode("utf-8")
    if not args.hypotheses and not data.strip():
        raise UsageError("no hypotheses: --hypotheses not given and standard input is empty")
    return paths, _io.BytesIO(data)


def load_systems(args, refset) -> list:
    """``(name, pairs, items)`` per system, in the order given (the first is the baseline)."""
    from multiref.metrics.references import match_items, to_items
    from multiref.metrics.score_inputs import load_system, system_names

    paths, stdin = hypothesis_paths(args)
    systems, shared = [], {}  # shared: each reference record's lists, built once for all systems
    for path, name in zip(paths, system_names(paths)):
        records = load_system(path, refset, args.eos, stdin)
        pairs = match_items(refset, records, "standard input" if path == "-" else path, partial=args.partial)
        systems.append((name, pairs, to_items(pairs, shared)))
    return systems


def score_systems(systems, metrics, log) -> list:
    """``scores[s][m]``: metric m's Score on system s (a ValueError/TypeError becomes a UserError)."""
    from multiref.util import progress
    from multiref.util.errors import UserError

    out = []
    with progress.task("scoring", total=len(systems) * len(metrics), unit="scores") as bar:
        for name, _, items in systems:
            row = []
            for metric in metrics:
                t0 = time.perf_counter()
                try:
                    row.append(metric.score_items(items))
                except UserError:
                    raise
                except (ValueError, TypeError) as exc:
                    message = str(exc)
                    raise UserError(message if message.startswith(metric.name) else f"{metric.name}: {message}") from None
                bar.update()
                log(f"{name}: {metric.name} done in {time.perf_counter() - t0:.2f}s")
            out.append(row)
    return out


def input_warnings(systems, metrics, args) -> list:
    """Warnings about the outputs that matter to the metrics of this run (one line each)."""
    from multiref_cli.score.report import style_warnings

    out = []
    explained = False
    for name, _, items in systems:
        prefix = f"{name}: " if len(systems) > 1 else ""
        warning = None if args.quiet else degenerate_warning(items, metrics, args, explain=not explained)
        if warning:
            out.append(prefix + warning)
            explained = True
        if any(m.needs_references for m in metrics):
            out += [prefix + w for w in style_warnings(items, args.lowercase, args.tokenizer)]
    return out


def handle(args) -> int:
    _single_threaded_blas()
    from multiref.util import progress
    from multiref.output.file_output import check_output, write_atomically
    from multiref.metrics.references import limit_references, load_references
    from multiref.util.options import from_args
    from multiref.util.tables import ColumnNames

    def note(message: str) -> None:  # something the user should know: shown unless --quiet
        if not args.quiet:
            print(f"multiref score: {message}", file=sys.stderr)

    def log(message: str) -> None:  # timings: progress, shown on a terminal or with --progress
        if progress.enabled():
            print(f"multiref score: {message}", file=sys.stderr)

    inputs = [args.references, *(args.hypotheses or []), args.vectors]
    check_output(args.output, "--output", inputs)
    check_output(args.per_item, "--per-item", inputs + [args.output])
    start = time.perf_counter()
    refset = limit_references(load_references(args.references, args.config, args.split, from_args(ColumnNames, args)),
                              args.max_references)
    systems = load_systems(args, refset)
    gc.freeze()  # the inputs live to the end: the cyclic collector need not walk them again and again
    names = list(dict.fromkeys(args.metric or (DEFAULT_GROUPED if refset.grouped else DEFAULT_FLAT)))
    metrics = build_metrics(names, args, note)
    config = resampling(args)
    for metric in metrics:
        check_test(metric, config)
    for name, _, items in systems:
        n_hyps = sum(len(item.hypotheses) for item in items)
        log(f"{name}: {len(items)} items, {n_hyps} hypotheses, {len(refset.records)} reference items ({refset.kind})")
    for warning in input_warnings(systems, metrics, args):
        print(f"multiref score: warning: {warning}", file=sys.stderr)
    scores = score_systems(systems, metrics, log)
    for name, row in zip((s[0] for s in systems), scores):
        for result in row:
            if result.extra.get("note"):
                note(f"{name + ': ' if len(systems) > 1 else ''}{result.name}: null: {result.extra['note']}")
    text = report(args, config, refset, systems, metrics, scores)
    if args.output:
        write_atomically(args.output, text)
    else:
        sys.stdout.write(text)
    if args.per_item:
        _write_per_item(args.per_item, systems, scores)
    log(f"total {time.perf_counter() - start:.2f}s")
    return 0


def _signature(result, items, refset) -> str:
    """The metric's signature, plus ``maxrefs:N`` (``--max-references``) and ``items:covered/total``
    when only part of the test set is scored."""
    signature = result.signature + (f"|maxrefs:{refset.max_references}" if refset.max_references else "")
    if len(items) < len(refset.records):
        return f"{signature}|items:{len(items)}/{len(refset.records)}"
    return signature


def resampling(args):
    """The :class:`multiref.metrics.significance.Resampling` of ``--confidence``,
    ``--paired-bs``/``--paired-ar``, their counts, ``--seed`` and ``--correction``."""
    from multiref.metrics.significance import Resampling

    test = "bs" if args.paired_bs else ("ar" if args.paired_ar else None)
    n = args.paired_bs_n if test == "bs" else (args.paired_ar_n if test == "ar" else None)
    return Resampling(test=test, n=n, confidence=args.confidence, n_confidence=args.paired_bs_n, seed=args.seed,
                      correction=args.correction)


def check_test(metric, config) -> None:
    """A UserError (one line naming the flag to use) when ``metric`` does not take the test."""
    from multiref.util.errors import UserError

    try:
        config.check(metric)
    except ValueError as exc:
        raise UserError(str(exc)) from None


def report(args, config, refset, systems, metrics, scores) -> str:
    """The output text: today's layout for one system without statistics, else the systems table."""
    from multiref_cli.score import report as score_report

    statistics = config.confidence or config.test is not None
    if len(systems) == 1 and not statistics and args.format in ("table", "json", "csv"):
        rows = [(r.name, r.score, _signature(r, systems[0][2], refset),
                 score_report.bleu_details(r) if args.verbose else None) for r in scores[0]]
        return _format(rows, args.format)
    from multiref_cli.score.stats import significance

    found = significance(config, systems, metrics, scores, refset) if statistics else None
    methods = interval_methods(metrics) if config.confidence else ["percentile"] * len(metrics)
    suffixes = [config.suffix(method) for method in methods]
    results = []
    for s, ((name, _, items), row) in enumerate(zip(systems, scores)):
        entry = score_report.SystemResult(name)
        for m, r in enumerate(row):
            signature = _signature(r, items, refset) + (f"|{suffixes[m]}" if suffixes[m] else "")
            ci, p = (found[m][s]["ci"], found[m][s]["p_value"]) if found else (None, None)
            entry.metrics[r.name] = {"score": r.score, "ci": list(ci) if ci else None, "p_value": p,
                                     "signature": signature}
            if args.verbose and score_report.bleu_details(r):
                entry.metrics[r.name]["details"] = score_report.bleu_details(r)
        results.append(entry)
    jackknifed = tuple(dict.fromkeys(m.name for m, method in zip(metrics, methods) if method == "jackknife"))
    legend = score_report.legend(config, systems[0][0], jackknifed)
    if args.format == "html":
        return score_report.html_page(results, systems, scores, legend, refset)
    return score_report.format_results(results, args.format, legend)


def interval_methods(metrics) -> list:
    """Per metric, how its 95% interval is computed (:func:`multiref.metrics.significance.interval_method`)."""
    from multiref.metrics.significance import interval_method

    return [interval_method(m) for m in metrics]
