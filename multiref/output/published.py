"""What a build publishes: row counts read from the files, a card that agrees with them, and
every split loadable with ``datasets.load_dataset`` (issue 11, items 4 and 5). Called on the
staging folder of :mod:`multiref.output.publish` before the swap.
"""

from __future__ import annotations

import json
import os
from typing import Sequence

from multiref.util.errors import UserError


def _warn(message: str) -> None:
    import sys

    print(f"[publish] {message}", file=sys.stderr, flush=True)


def check_dataset(folder: str, *, required: Sequence[tuple] = ()) -> dict:
    """Row counts of a dataset folder as written, read from its parquet footers:
    ``{config: {split: rows}}``; makes the card agree with the files and keeps every split
    loadable with ``datasets.load_dataset``, which rejects a file holding a row group of no
    rows (such a file is rewritten with no row group) and a split with no rows (left out of
    the card's configs, with a warning; a config with no rows at all too).

    UserError when nothing has rows, or when a ``(config, split)`` of ``required`` (without
    which the dataset is unusable) has none: then nothing should be published.
    """
    from multiref.output import hfdata

    meta = hfdata.load_meta(folder)
    counts = {name: {split: sum(_rows_of(p) for p in _split_files(folder, pattern))
                     for split, pattern in sorted(entry["data_files"].items())}
              for name, entry in sorted(meta.get("configs", {}).items())}
    empty = not any(n for rows in counts.values() for n in rows.values())
    for config, split in ([("any", "")] if empty else []) + list(required):
        if counts.get(config, {}).get(split, 0) == 0:
            what = "no config has any rows" if config == "any" else f"{config} {split} has no rows"
            stats = os.path.join(folder, "stats.json")
            where = f"the dropped and rejected counts in {stats}" if os.path.exists(stats) else "the messages above"
            raise UserError(f"no usable dataset: {what} (see {where}); nothing was published")
    changed = False
    for name, rows in counts.items():
        entry = meta["configs"][name]
        for split, n in rows.items():
            if n == 0:
                _warn(f"warning: {name} {split} has no rows; it is left out of the card, so "
                      f"datasets.load_dataset(FOLDER, {name!r}) has no {split!r} split")
                for key in ("data_files", "splits", "split_bytes"):
                    entry.get(key, {}).pop(split, None)
            elif entry["splits"].get(split) != n:
                entry["splits"][split] = n
            else:
                continue
            changed = True
        if not entry["splits"]:
            _warn(f"warning: config {name} has no rows at all; it is left out of the card")
            del meta["configs"][name]
    if changed:
        write_meta(folder, meta)
    return {name: {s: n for s, n in rows.items() if n} for name, rows in counts.items() if any(rows.values())}


def _split_files(folder: str, pattern: str) -> list:
    import glob

    return sorted(glob.glob(os.path.join(folder, pattern)))


def _rows_of(path: str) -> int:
    """Rows of a parquet file; a file with only empty row groups is rewritten with none."""
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    if meta.num_rows == 0 and meta.num_row_groups:
        tmp = path + ".tmp"
        pq.ParquetWriter(tmp, pq.ParquetFile(path).schema_arrow, compression="snappy").close()
        os.replace(tmp, path)  # a new file: a hard link to the old one is left as it was
    return meta.num_rows


def write_meta(folder: str, meta: dict) -> None:
    """Write ``dataset_meta.json`` (as :func:`multiref.output.hfdata.add_config` does) and the card."""
    from multiref.output import hfdata

    with open(os.path.join(folder, hfdata.META_FILE), "w", encoding="utf-8") as fh:
        json.dump(meta, fh, indent=2, sort_keys=True, ensure_ascii=False)
        fh.write("\n")
    hfdata.write_card(folder, meta)
