"""``multiref score``: score system outputs against multi-reference test sets.

Examples::

    multiref score --references test.group.json --hypotheses system.jsonl
    multiref score --references out/lsdscc --config test_grouped --split test \\
        --hypotheses system.jsonl --metric maxbleu --metric mds --metric pds --format json
    multiref score --references multiref_dd.jsonl --hypotheses outputs.jsonl \\
        --metric bleu --bleu-order 2 --bleu-smoothing nltk1 --aggregate max --per-item items.jsonl

References: LSDSCC grouped JSON, JSON lines, or a dataset folder (see
:mod:`multiref.metrics.references`). Each metric gets only the options its ``__init__`` accepts
and keeps its own defaults for the options not given; the output shows every metric's
signature, which records all options that change the number.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
import time

DEFAULT_GROUPED = ("maxbleu", "mds", "pds")
DEFAULT_FLAT = ("bleu",)
FORMATS = ("table", "json", "csv")
TIES = ("auto", "first", "lsdscc")
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
    from multiref_cli.flags import integer_from
    from multiref.metrics.base import AGGREGATES, MAX_ORDER
    from multiref.metrics.bleu import SMOOTHINGS
    from multiref_cli import tokenizer_choices

    parser.add_argument("--references", "-r", required=True, metavar="PATH",
                        help="LSDSCC grouped JSON {query: {group_id: [refs]}}, JSON lines with id and "
                             "references/groups, or a dataset folder written by multiref")
    parser.add_argument("--hypotheses", "-H", required=True, metavar="PATH",
                        help="JSON lines: id or query, and hypotheses (list) or hypothesis (string)")
    parser.add_argument("--config", help="dataset folder only: the config to score against (e.g. test_grouped)")
    parser.add_argument("--split", help="dataset folder only: the split (default: the only one, else test)")
    parser.add_argument("--metric", "-m", action="append", metavar="NAME",
                        help="metric to compute, repeatable (default: maxbleu, mds, pds for grouped references, "
                             "bleu otherwise); see `multiref metrics list`")
    parser.add_argument("--tokenizer", choices=tokenizer_choices(), default="whitespace",
                        help="tokenizer (default: whitespace, the public LSDSCC scorer's)")
    parser.add_argument("--lowercase", action=argparse.BooleanOptionalAction, default=False,
                        help="lowercase before tokenizing (default: no)")
    parser.add_argument("--bleu-order", type=integer_from(1, MAX_ORDER), metavar="N",
                        help=f"BLEU family: max n-gram order, 1 to {MAX_ORDER} (default 4)")
    parser.add_argument("--bleu-weights", type=bleu_weights, metavar="W1,W2,..",
                        help=f"BLEU family: custom n-gram weights, at most {MAX_ORDER} weights (override the order)")
    parser.add_argument("--bleu-smoothing", choices=SMOOTHINGS,
                        help="BLEU family smoothing (default: none for bleu, add1 for maxbleu/mds/pds)")
    parser.add_argument("--brevity-penalty", dest="brevity_penalty", action=argparse.BooleanOptionalAction,
                        default=None, help="BLEU family brevity penalty (default: on for bleu, off for maxbleu/mds/pds)")
    parser.add_argument("--ties", choices=TIES, default="auto",
                        help="maxbleu/mds/pds when an output ties between groups: lsdscc = the public LSDSCC scorer "
                             "(groups by numeric id, 'null' last; its floating-point sums and means), first = the "
                             "first group in file order; auto (default) = lsdscc for the public LSDSCC JSON format "
                             "scored with the public scorer's BLEU (add1, no brevity penalty), else first")
    parser.add_argument("--aggregate", choices=AGGREGATES,
                        help="multi-reference aggregation for the metrics that offer it")
    parser.add_argument("--vectors", metavar="PATH", help="word vectors for the embedding metrics (gensim .kv or word2vec)")
    parser.add_argument("--distinct-order", type=integer_from(1, MAX_ORDER), metavar="N",
                        help=f"n for distinct/distinct_per_utterance, 1 to {MAX_ORDER} (default 2)")
    parser.add_argument("--format", choices=FORMATS, default="table", help="output format (default: table)")
    parser.add_argument("--per-item", metavar="PATH", help="write each item's scores (JSON lines, or CSV if PATH ends in .csv)")
    parser.add_argument("--output", "-o", metavar="PATH", help="write the scores here instead of standard output")
    parser.add_argument("--partial", action="store_true",
                        help="score only the reference items that have outputs (default: all must have one)")
    parser.add_argument("--quiet", "-q", action="store_true", help="nothing on standard error but errors")
    parser.set_defaults(func=handle)


def resolve_ties(requested: str, reference_kind: str | None, options: dict) -> str:
    """``--ties auto``: ``lsdscc`` for the public LSDSCC JSON scored with the public scorer's BLEU
    (add1, no brevity penalty, uniform weights: the metrics' defaults), else ``first``."""
    if requested != "auto":
        return requested
    public_bleu = (options.get("smoothing", "add1") == "add1" and not options.get("brevity_penalty", False)
                   and options.get("weights") is None)
    return "lsdscc" if reference_kind == "lsdscc-json" and public_bleu else "first"


def metric_options(name: str, args, reference_kind: str | None = None) -> tuple:
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
        "order": args.bleu_order if bleu_family else (args.distinct_order if name.startswith("distinct") else None),
    }
    options = {k: v for k, v in candidates.items() if v is not None and k in names}
    if "ties" in names:
        options["ties"] = resolve_ties(getattr(args, "ties", "auto"), reference_kind, options)
    skipped = []
    if args.aggregate is not None and "aggregate" in names:
        allowed = getattr(metric_class(name), "aggregates", ())  # not a recall wrapper: those take no aggregate
        if args.aggregate in allowed:
            options["aggregate"] = args.aggregate
        else:
            skipped.append(f"{name} does not take --aggregate {args.aggregate} (it uses {', '.join(allowed)})")
    return options, skipped


def build_metrics(names, args, log, reference_kind: str | None = None) -> list:
    from multiref.util.errors import UserError
    from multiref.metrics import get_metric

    metrics = []
    for name in names:
        try:
            options, skipped = metric_options(name, args, reference_kind)
            for note in skipped:
                log(f"note: {note}")
            metrics.append(get_metric(name, **options))
        except UserError:
            raise
        except (ValueError, TypeError, ImportError) as exc:
            raise UserError(f"--metric {name}: {exc}") from None
    return metrics


def degenerate_counts(items, tokenize) -> tuple:
    """``(empty, short, total)``: hypotheses with no token, with 1..SHORT_TOKENS tokens, all."""
    empty = short = total = 0
    for item in items:
        for hypothesis in item.hypotheses:
            n = len(tokenize(hypothesis))
            total += 1
            empty += n == 0
            short += 0 < n <= SHORT_TOKENS
    return empty, short, total


def degenerate_warning(items, metrics, args) -> str | None:
    """A warning naming the counts of empty and very short hypotheses and the settings under
    which they score high (add-one smoothing without brevity penalty, the public LSDSCC
    scorer's BLEU: an empty output gets 1.0 against every group); None when there are none."""
    from multiref.metrics.tokenizers import get_tokenizer

    empty, short, total = degenerate_counts(items, get_tokenizer(args.tokenizer or "whitespace", bool(args.lowercase)))
    if not empty and not short:
        return None
    rewarding = [m.name for m in metrics
                 if getattr(m, "smoothing", None) == "add1" and not getattr(m, "brevity_penalty", True)]
    text = (f"{empty} of {total} hypotheses are empty and {short} have 1-{SHORT_TOKENS} tokens. "
            "Add-one smoothing without a brevity penalty (smooth:add1|bp:no, the public LSDSCC scorer's BLEU and "
            "the maxbleu/mds/pds default) scores an empty hypothesis 1.0 against any references and a one-word "
            "one 1.0 when its word is in them (0.84 when it is not)")
    if rewarding:
        text += (f"; here: {', '.join(rewarding)}. Check the outputs, or compare with --bleu-smoothing nltk1 "
                 "--brevity-penalty")
    else:
        text += "; no metric of this run uses it"
    return text + "."


def _format(results, fmt: str) -> str:
    if fmt == "json":
        return json.dumps({r.name: {"score": r.score, "signature": r.signature} for r in results}, indent=2) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(["metric", "score", "signature"])
        for r in results:
            writer.writerow([r.name, repr(r.score), r.signature])
        return buf.getvalue()
    width = max(len("metric"), *(len(r.name) for r in results))
    lines = [f"{'metric':<{width}}  {'score':>8}  signature"]
    lines += [f"{r.name:<{width}}  {r.score:>8.4f}  {r.signature}" for r in results]
    return "\n".join(lines) + "\n"


def _write_per_item(path: str, pairs, results) -> None:
    rows = []
    for i, (hyp, ref) in enumerate(pairs):
        row = {"id": ref.id}
        if ref.query is not None and ref.query != ref.id:
            row["query"] = ref.query
        row["hypotheses"] = len(hyp.hypotheses)
        for r in results:
            row[r.name] = r.per_item[i] if i < len(r.per_item) else None
        rows.append(row)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        if path.endswith(".csv"):
            writer = csv.DictWriter(fh, fieldnames=list(rows[0]) if rows else ["id"], lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
        else:
            for row in rows:
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def _single_threaded_blas() -> None:
    """One OpenBLAS thread unless the user chose otherwise: numpy's bundled OpenBLAS starts its
    thread pool when numpy is imported (about 50 ms of a whole ``multiref score`` run), and
    scoring does no large linear algebra (embedding metrics take dot products of single vectors)."""
    import os

    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def handle(args) -> int:
    _single_threaded_blas()
    from multiref.util import progress
    from multiref.util.errors import UserError
    from multiref.util.files import require_writable
    from multiref.metrics.references import load_hypotheses, load_references, match_items, to_items

    def note(message: str) -> None:  # something the user should know: shown unless --quiet
        if not args.quiet:
            print(f"multiref score: {message}", file=sys.stderr)

    def log(message: str) -> None:  # timings: progress, shown on a terminal or with --progress
        if progress.enabled():
            print(f"multiref score: {message}", file=sys.stderr)

    require_writable(args.output, "--output")
    require_writable(args.per_item, "--per-item")
    start = time.perf_counter()
    refset = load_references(args.references, args.config, args.split)
    hyps = load_hypotheses(args.hypotheses)
    pairs = match_items(refset, hyps, args.hypotheses, partial=args.partial)
    items = to_items(pairs)
    names = list(dict.fromkeys(args.metric or (DEFAULT_GROUPED if refset.grouped else DEFAULT_FLAT)))
    metrics = build_metrics(names, args, note, refset.kind)
    n_hyps = sum(len(item.hypotheses) for item in items)
    log(f"{len(items)} items, {n_hyps} hypotheses, {len(refset.records)} reference items ({refset.kind})")
    warning = degenerate_warning(items, metrics, args)
    if warning:
        print(f"multiref score: warning: {warning}", file=sys.stderr)
    results = []
    for metric in metrics:
        t0 = time.perf_counter()
        try:
            results.append(metric.score_items(items))
        except UserError:
            raise
        except (ValueError, TypeError) as exc:
            message = str(exc)
            raise UserError(message if message.startswith(metric.name) else f"{metric.name}: {message}") from None
        log(f"{metric.name} done in {time.perf_counter() - t0:.2f}s")
    text = _format(results, args.format)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    if args.per_item:
        _write_per_item(args.per_item, pairs, results)
    log(f"total {time.perf_counter() - start:.2f}s")
    return 0
