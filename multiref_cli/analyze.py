"""``multiref analyze``: evaluate the evaluators (correlation, discrimination, refcount, regression).

The options are declared once, in :mod:`multiref.analysis.config`; this module adds their
flags, turns the parsed flags into the command's config once, makes one call to
:mod:`multiref.analysis.commands` (which checks the output folder, runs the analysis and writes
the reports) and prints what it returns. Only the standard library is imported at module level.

Examples::

    multiref analyze correlation --ratings mturk_rating_processed_output.csv \\
        --metric bleu1 --metric bleu4:smoothing=nltk1 --metric rouge_l --output out/corr
    multiref analyze discrimination --validation dev.json --test test.json --metric bleu2 --metric delta_bleu
    multiref analyze refcount --ratings mturk_rating_processed_output.csv --multiref-references multireftest.json
    multiref analyze regression --ratings scored_references.jsonl --similarity bleu
"""

from __future__ import annotations

import argparse
import sys


def register(parser: argparse.ArgumentParser) -> None:
    """``multiref analyze correlation|refcount|discrimination|regression``."""
    from multiref.analysis import config
    from multiref.analysis.paper_defaults import GUPTA_2019, SAI_2020, SUGIYAMA  # stdlib-only modules
    from multiref_cli.common import group, tokenizer_choices

    tokenizer_choices()  # registers the lsdscc tokenizer that --tokenizer accepts
    sub = group(parser)
    _add(sub, "correlation", config.CorrelationConfig,
         help="metric scores against human ratings, one reference against all",
         description="Correlate metric scores with human ratings, with the single original reference and with all "
                     "references, at the response and system level. Defaults reproduce "
                     f"{GUPTA_2019.paper} ({GUPTA_2019.study}).")
    _add(sub, "refcount", config.RefcountConfig, help="correlation as the number of references grows",
         description="Correlation of metrics with human ratings for 1..all references, averaged over seeded random "
                     f"orders of the references. Defaults follow {GUPTA_2019.paper}.")
    _add(sub, "discrimination", config.DiscriminationConfig, help="positives against negatives (DailyDialog++)",
         description="Score DailyDialog++ candidates against the other positives; report the point-biserial "
                     "correlation with the label and the accuracy at a threshold chosen on the validation split, "
                     f"for random and adversarial negatives. Defaults follow {SAI_2020.paper} ({SAI_2020.study}). "
                     "The embedding metrics (e.g. --metric greedy_matching) need word vectors: --vectors PATH, or "
                     "--train-vectors-from DIALOGUES_FILE as for correlation.")
    _add(sub, "regression", config.RegressionConfig, help="Sugiyama's regression evaluator (AM, WS, SVR), leave-one-out",
         description="Leave-one-out evaluation of the AM, WS and SVR evaluators on references scored by people "
                     f"(docs/algorithms.md#7-sugiyama-regression). Defaults follow {SUGIYAMA.paper} "
                     f"({SUGIYAMA.study}).")


def _add(sub, name: str, cls: type, help: str, description: str) -> None:  # noqa: A002
    """Subcommand ``name``: the flags of ``cls``; its handler runs ``commands.<name>``."""
    from multiref.util.options import add_arguments

    p = sub.add_parser(name, help=help, description=description)
    add_arguments(p, cls)
    p.set_defaults(func=lambda args: _run(name, cls, args))


# -- the handler: parsed flags -> config (once), one call (multiref.analysis.commands), print ---

def _run(name: str, cls: type, args) -> int:
    """Build ``cls`` from the parsed flags, run the analysis ``name`` and print its outcome: the
    notes on stderr (``note:`` lines not under --quiet), then the table or, with ``--format
    json``, the payload."""
    from multiref.analysis import commands, reports
    from multiref.util.options import from_args

    config = from_args(cls, args)
    outcome = getattr(commands, name)(config)
    for note in outcome.notes:
        if not (args.quiet and note.startswith("note:")):
            print(f"multiref analyze: {note}", file=sys.stderr)
    sys.stdout.write(reports.dumps(outcome.payload) if config.output.format == "json" else outcome.text)
    return 0
