"""Ids-only releases of an LSDSCC dataset: publish ids, let others rebuild the text.

Reddit's text is not ours to redistribute (DSTC7 and PolyAI publish scripts, not text). An
ids release (:func:`export_ids`) is one JSON file with no text at all:

- ``format``: :data:`FORMAT`;
- ``options``: the build options (``CorpusConfig.as_options()``, as in ``stats.json``);
- ``source_files``: the dump files the dataset was built from (name, bytes, SHA-256, records,
  first/last ``created_utc``: :class:`lsdscc.corpus.provenance.FileTally`);
- ``files``: per parquet file (``<config>/<split>-NNNNN-of-NNNNN.parquet``) its config, split and
  rows as ids only: ``[thread_id, query_id, response_id]`` (``single_turn``) or
  ``[thread_id, [comment ids]]`` (``multi_turn``), in file order.

Rehydrating (:func:`build_argv` then :func:`compare`) rebuilds the dataset with the same
options from the user's own dumps; with the same dump files the parquet files come out
byte-identical. Rows the user's dumps cannot give (deleted since, a missing month) are named
per file; rows the release does not hold are removed, so the rebuilt folder never holds more
than the release.
"""

from __future__ import annotations

import json
import os

from multiref.util.errors import UserError

FORMAT = "multiref-lsdscc-ids/1"
CONFIGS = ("single_turn", "multi_turn")


def _row_ids(config: str, table) -> list:
    if config == "single_turn":
        return [list(r) for r in zip(table.column("thread_id").to_pylist(), table.column("query_id").to_pylist(),
                                     table.column("response_id").to_pylist())]
    return [[t, list(c)] for t, c in zip(table.column("thread_id").to_pylist(), table.column("comment_ids").to_pylist())]


def parquet_files(folder: str) -> list:
    """``[(config, split, relative path)]`` of the corpus configs' parquet files, sorted."""
    out = []
    for config in CONFIGS:
        base = os.path.join(folder, config)
        if not os.path.isdir(base):
            continue
        for name in sorted(os.listdir(base)):
            if name.endswith(".parquet"):
                out.append((config, name.split("-", 1)[0], f"{config}/{name}"))
    return out


def _load_stats(folder: str) -> dict:
    path = os.path.join(folder, "stats.json")
    if not os.path.isfile(path):
        raise UserError(f"{folder} is not an LSDSCC dataset folder (no stats.json)")
    with open(path, encoding="utf-8") as fh:
        stats = json.load(fh)
    if "options" not in stats or "subreddits" not in stats.get("options", {}):
        raise UserError(f"{path}: not the stats of an LSDSCC corpus build (no corpus options)")
    return stats


def export_ids(folder: str) -> dict:
    """The ids release of the dataset ``folder`` (see the module docstring)."""
    import pyarrow.parquet as pq

    stats = _load_stats(folder)
    files = parquet_files(folder)
    if not files:
        raise UserError(f"{folder} has no single_turn/ or multi_turn/ parquet files")
    out = {"format": FORMAT, "options": stats["options"], "source_files": stats.get("files", []), "files": {}}
    for config, split, rel in files:
        table = pq.read_table(os.path.join(folder, rel))
        out["files"][rel] = {"config": config, "split": split, "rows": _row_ids(config, table)}
    return out


def ids_text(release: dict) -> str:
    """The ids file's text (sorted keys, one file per line of ``files``: small diffs)."""
    return json.dumps(release, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def read_ids(path: str) -> dict:
    """An ids release file; UserError naming it when it is not one."""
    try:
        with open(path, encoding="utf-8") as fh:
            release = json.load(fh)
    except FileNotFoundError:
        raise UserError(f"ids file not found: {path}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"{path}: not an ids release (not JSON: {exc})") from None
    if not isinstance(release, dict) or release.get("format") != FORMAT:
        raise UserError(f"{path}: not an ids release (expected \"format\": \"{FORMAT}\")")
    for key in ("options", "files"):
        if not isinstance(release.get(key), dict):
            raise UserError(f"{path}: not an ids release (no {key!r} object)")
    return release


def build_argv(options: dict) -> list:
    """Corpus flags (:func:`pipelines.lsdscc_options.add_corpus_arguments`) giving ``options``.

    Raises UserError for an option no flag sets to the recorded value (a build made with a
    changed default cannot be reproduced by flags)."""
    from lsdscc.corpus.config import CorpusConfig
    from multiref.util.options import to_argv

    default = CorpusConfig().as_options()
    argv, fixed = to_argv(CorpusConfig, options)
    if options.get("num_shards") is not None:  # the card records the number used; the job's --num-shards sets it
        argv += ["--num-shards", str(options["num_shards"])]
    for key in sorted(set(options) - fixed - {"num_shards"}):
        if options[key] != default.get(key):
            raise UserError(f"the release was built with {key}={options[key]!r}, which no flag of this "
                            f"version sets (default {default.get(key)!r}); it cannot be rebuilt")
    return argv


def compare(release: dict, folder: str) -> tuple[list, list]:
    """Make the rebuilt ``folder`` hold the release's rows only; report what is missing.

    Returns ``(missing, removed)``: ``missing`` has one ``(file, [ids of rows not rebuilt])``
    per release file that lacks rows (a response id, or a conversation's last comment id);
    ``removed``: ``(file, n)`` rows the release does not hold, removed from the parquet file
    (which is then rewritten with the same writer). A file is rewritten only when it changes.
    """
    import pyarrow.parquet as pq

    from multiref.output.hfdata import write_table

    missing, removed = [], []
    present = {rel: (config, split) for config, split, rel in parquet_files(folder)}
    for rel, entry in sorted(release["files"].items()):
        wanted = [_key(entry["config"], row) for row in entry["rows"]]
        if rel not in present:
            missing.append((rel, [_label(entry["config"], row) for row in entry["rows"]]))
            continue
        path = os.path.join(folder, rel)
        table = pq.read_table(path)
        have = [_key(entry["config"], row) for row in _row_ids(entry["config"], table)]
        keep = set(wanted)
        lost = [_label(entry["config"], row) for row, key in zip(entry["rows"], wanted) if key not in set(have)]
        if lost:
            missing.append((rel, lost))
        extra = [i for i, key in enumerate(have) if key not in keep]
        if extra:
            import pyarrow as pa

            mask = pa.array([key in keep for key in have])
            write_table(table.filter(mask), path)
            removed.append((rel, len(extra)))
    for rel in sorted(set(present) - set(release["files"])):
        os.remove(os.path.join(folder, rel))
        removed.append((rel, -1))
    return missing, removed


def _key(config: str, row) -> tuple:
    return (row[0], row[1], row[2]) if config == "single_turn" else (row[0], tuple(row[1]))


def _label(config: str, row) -> str:
    """The id that names a row: the response (single_turn) or the conversation's last comment."""
    return row[2] if config == "single_turn" else (row[1][-1] if row[1] else row[0])


def digest_notes(release: dict, inputs) -> list:
    """Notes on the user's dump files against the release's: names missing or digests that
    differ (the rebuild may then differ). ``inputs``: the files' summaries after the build."""
    theirs = {f["name"]: f["sha256"] for f in release.get("source_files", [])}
    ours = {f["name"]: f["sha256"] for f in inputs}
    notes = [f"dump file {name} of the release was not among the inputs" for name in sorted(set(theirs) - set(ours))]
    notes += [f"dump file {name} differs from the release's (SHA-256 {ours[name][:12]}..., release "
              f"{theirs[name][:12]}...): rows may differ" for name in sorted(set(theirs) & set(ours))
              if theirs[name] != ours[name]]
    return notes
