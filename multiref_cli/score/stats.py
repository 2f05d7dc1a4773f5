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


def significance(config, systems, metrics, scores, refset) -> list:
    """``found[m][s]``: ``{"ci", "p_value"}`` of metric m for system s (system 0: the baseline),
    under ``config`` (:class:`multiref.metrics.significance.Resampling`)."""
    from multiref.util import progress
    from multiref.util.errors import UserError
    from multiref.metrics.significance import compare_results

    if config.test is not None and len(systems) < 2:
        raise UserError("--paired-bs/--paired-ar compare systems with the first one: give two or more "
                        "--hypotheses files")
    _check_same_items(systems)
    orders = [_reference_order(pairs, refset) for _, pairs, _ in systems]
    draws: dict = {}
    found = []
    with progress.task("resampling", total=len(metrics) * len(systems), unit="systems") as bar:
        for m, metric in enumerate(metrics):
            results = [scores[s][m] for s in range(len(systems))]
            found.append(compare_results(metric, results, [items for _, _, items in systems], config, orders,
                                         draws, bar.update))
    return found
