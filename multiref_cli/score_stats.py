"""``multiref score --confidence/--paired-bs/--paired-ar``: resampling every metric of the run
over the items, with :mod:`multiref.metrics.significance`."""

from __future__ import annotations

import numpy as np


def _reference_order(pairs, refset) -> np.ndarray:
    """Row permutation putting a system's items in the references' order (systems may list them
    in any order; the paired tests need the same item on the same row)."""
    index = {record.id: i for i, record in enumerate(refset.records)}
    return np.argsort([index[ref.id] for _, ref in pairs], kind="stable")


def _check_same_items(systems) -> None:
    from multiref.util.errors import UserError

    first = {ref.id for _, ref in systems[0][1]}
    for name, pairs, _ in systems[1:]:
        ids = {ref.id for _, ref in pairs}
        if ids != first:
            raise UserError(f"{name}: covers {len(ids)} reference items and the baseline {systems[0][0]} "
                            f"{len(first)}, {len(ids ^ first)} differ; paired tests need the same items in every system")


def _reorder(stats, order):
    from multiref.metrics.significance import ItemStats

    inc = stats.incidence[order] if stats.incidence is not None else None
    return ItemStats(stats.table[order], stats.finish, inc)


def significance(args, systems, metrics, scores, refset) -> list:
    """``found[m][s]``: ``{"ci", "p_value"}`` of metric m for system s (system 0: the baseline)."""
    from multiref.util import progress
    from multiref.util.errors import UserError
    from multiref.metrics.significance import compare, metric_stats, widen

    if (args.paired_bs or args.paired_ar) and len(systems) < 2:
        raise UserError("--paired-bs/--paired-ar compare systems with the first one: give two or more "
                        "--hypotheses files")
    _check_same_items(systems)
    orders = [_reference_order(pairs, refset) for _, pairs, _ in systems]
    test = "bs" if args.paired_bs else ("ar" if args.paired_ar else None)
    n = args.paired_bs_n if test == "bs" else (args.paired_ar_n if test == "ar" else None)
    draws: dict = {}
    found = []
    with progress.task("resampling", total=len(metrics) * len(systems), unit="systems") as bar:
        for m, metric in enumerate(metrics):
            vocabulary: dict = {}
            stats = [metric_stats(metric, scores[s][m], systems[s][2], vocabulary) for s in range(len(systems))]
            stats = [_reorder(widen(st, len(vocabulary) + 1), order) for st, order in zip(stats, orders)]
            found.append(compare(stats, [scores[s][m].score for s in range(len(systems))], confidence=args.confidence,
                                 test=test, n=n, seed=args.seed, n_confidence=args.paired_bs_n, draws=draws,
                                 tick=bar.update))
    return found
