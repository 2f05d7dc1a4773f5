"""The inputs of a scoring run: the references and each system's outputs matched to them."""

from __future__ import annotations

import io
import sys


def references(config):
    """The reference set of ``config`` (a :class:`multiref.scoring.config.ScoreConfig`):
    :func:`multiref.metrics.references.load_references`, cut to ``max_references``."""
    from multiref.metrics.references import limit_references, load_references
    from multiref.util.errors import UserError

    if not config.references:
        raise UserError("no references: give --references PATH (ScoreConfig(references=...))")
    refset = load_references(config.references, config.dataset_config, config.split, config.columns)
    return limit_references(refset, config.max_references)


def hypothesis_paths(paths, stdin=None) -> tuple:
    """``(paths, stdin)``: the systems to score (``paths``, or standard input when none is
    given) and the bytes of standard input when a system is ``-`` (None otherwise). ``stdin``:
    a binary stream to read for ``-`` instead of the process's standard input."""
    from multiref.util.errors import UsageError

    given = list(paths)
    paths = given or ["-"]
    if "-" not in paths:
        return paths, None
    if stdin is None:
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError("no hypotheses: give --hypotheses FILE (or several), or pipe them on standard input")
        stdin = sys.stdin.buffer if hasattr(sys.stdin, "buffer") else io.BytesIO(sys.stdin.read().encode("utf-8"))
    data = stdin.read()
    if not given and not data.strip():
        raise UsageError("no hypotheses: --hypotheses not given and standard input is empty")
    return paths, io.BytesIO(data)


def systems(config, refset, stdin=None) -> list:
    """``(name, pairs, items)`` per system of ``config.hypotheses``, in the order given (the
    first is the baseline): ``pairs`` of (outputs record, reference record), ``items`` the
    :class:`multiref.metrics.Item` list the metrics score."""
    from multiref.metrics.references import match_items, to_items
    from multiref.metrics.score_inputs import load_system, system_names

    paths, data = hypothesis_paths(config.hypotheses, stdin)
    out, shared = [], {}  # shared: each reference record's lists, built once for all systems
    for path, name in zip(paths, system_names(paths)):
        records = load_system(path, refset, config.eos, data)
        pairs = match_items(refset, records, "standard input" if path == "-" else path, partial=config.partial)
        out.append((name, pairs, to_items(pairs, shared)))
    return out
