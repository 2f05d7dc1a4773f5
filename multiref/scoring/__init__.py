"""Scoring systems against multi-reference test sets, as one call: the library behind
``multiref score``.

``score(ScoreConfig(references="refs.jsonl", hypotheses=("a.jsonl", "b.jsonl"),
statistics=Statistics(paired_bs=True)))`` returns a :class:`multiref.scoring.run.ScoreOutcome`:
per system and metric the score, interval, p-value, complete signature and per-item scores,
and the run's notes and warnings. The options are declared once in
:mod:`multiref.scoring.config` (the command line's flags derive from them). Importing this
package imports the standard library only; :func:`score` imports the metrics when called.
"""

from __future__ import annotations

from multiref.scoring.config import BleuOptions, MetricOptions, ScoreConfig, Statistics  # noqa: F401


def score(config, *, stdin=None, on_message=None):
    """:func:`multiref.scoring.run.score` (imported on first call: numpy and the metrics)."""
    from multiref.scoring.run import score as run

    return run(config, stdin=stdin, on_message=on_message)
