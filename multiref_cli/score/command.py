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

The options are declared once, in :mod:`multiref.scoring.config`; this module adds their
flags, turns the parsed flags into a :class:`multiref.scoring.config.ScoreConfig` once, makes
one call to :func:`multiref.scoring.score` (references, systems, metrics, statistics), formats
what it returns (:mod:`multiref_cli.score.report`), writes ``--output``/``--per-item``
atomically and prints the notes and warnings. References: LSDSCC grouped JSON, JSON lines, or
a dataset folder (see :mod:`multiref.metrics.references`); systems: JSON lines or plain text
(see :mod:`multiref.metrics.score_inputs`). Each metric gets only the options its ``__init__``
accepts and keeps its own defaults for the options not given; the output shows every metric's
signature, which records all options that change the number.
"""

from __future__ import annotations

import argparse
import csv
import gc
import io
import json
import sys
import time


def register(parser: argparse.ArgumentParser) -> None:
    from multiref.scoring.config import ScoreConfig
    from multiref.util.options import add_arguments
    from multiref_cli.common import tokenizer_choices

    tokenizer_choices()  # registers the lsdscc tokenizer that --tokenizer accepts
    add_arguments(parser, ScoreConfig)
    parser.set_defaults(func=handle)


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


def _print_message(quiet: bool, message) -> None:
    """A note (unless --quiet), a warning, or a timing (on a terminal or with --progress) on stderr."""
    from multiref.util import progress

    if message.kind == "warning":
        print(f"multiref score: warning: {message.text}", file=sys.stderr)
    elif (message.kind == "note" and not quiet) or (message.kind == "log" and progress.enabled()):
        print(f"multiref score: {message.text}", file=sys.stderr)


def handle(args) -> int:
    """The parsed flags to a :class:`multiref.scoring.config.ScoreConfig` (once), then :func:`run`."""
    from multiref.scoring.config import ScoreConfig
    from multiref.util.options import from_args

    _single_threaded_blas()
    return run(from_args(ScoreConfig, args))


def run(config) -> int:
    """Refuse an output that is an input, score (:func:`multiref.scoring.score`), write the text
    to standard output or ``--output`` and the per-item scores to ``--per-item``."""
    import functools

    from multiref.output.file_output import check_output, write_atomically
    from multiref.scoring import score
    from multiref.util import progress

    inputs = [config.references, *config.hypotheses, config.metrics.vectors]
    check_output(config.output, "--output", inputs)
    check_output(config.per_item, "--per-item", inputs + [config.output])
    start = time.perf_counter()
    outcome = score(config, on_message=functools.partial(_print_message, config.quiet))
    gc.freeze()  # the outcome lives to the end: the full collection at exit need not walk it
    text = report(config, outcome)
    if config.output:
        write_atomically(config.output, text)
    else:
        sys.stdout.write(text)
    if config.per_item:
        _write_per_item(config.per_item, outcome.inputs, outcome.scores)
    if progress.enabled():
        print(f"multiref score: total {time.perf_counter() - start:.2f}s", file=sys.stderr)
    return 0


def report(config, outcome) -> str:
    """The output text: today's layout for one system without statistics, else the systems table."""
    from multiref_cli.score import report as score_report

    if len(outcome.systems) == 1 and not outcome.statistics and config.format in ("table", "json", "csv"):
        results = outcome.systems[0].metrics
        rows = [(name, r["score"], r["signature"], r.get("details")) for name, r in results.items()]
        return _format(rows, config.format)
    legend = score_report.legend(outcome.resampling, outcome.systems[0].name, outcome.jackknifed)
    if config.format == "html":
        return score_report.html_page(outcome.systems, outcome.inputs, outcome.scores, legend, outcome.references)
    return score_report.format_results(outcome.systems, config.format, legend)
