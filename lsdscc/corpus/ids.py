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

Rehydrating (``multiref lsdscc rehydrate``: the recorded options become the corpus configs,
checked as the build's flags are, then :func:`compare`) rebuilds the dataset with the same
options from the user's own dumps; with the same dump files the parquet files come out
byte-identical. Rows the user's dumps cannot give (deleted since, a missing month) are named
per file; rows the release does not hold are removed, so the rebuilt folder never holds more
than the release.
"""

from __future__ import annotations

import json
import os
import re

from dataclasses import dataclass

from multiref.util.errors import UserError
from multiref.util.options import option

FORMAT = "multiref-lsdscc-ids/1"
CONFIGS = ("single_turn", "multi_turn")
#: a ``files`` key: a parquet file of a corpus config, never a path outside it
_REL = re.compile(r"^(single_turn|multi_turn)/([a-z]+)-\d{5}-of-\d{5}\.parquet$")
_OPTION = re.compile(r"^[a-z][a-z0-9_]{0,59}$")  # a recorded option's name (CorpusConfig's fields)
_ID = re.compile(r"^\S{1,100}$")  # a Reddit id (with or without its t1_/t3_ prefix): a short word


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
    from multiref.util.files import read_json

    path = os.path.join(folder, "stats.json")
    if not os.path.isfile(path):
        raise UserError(f"{folder} is not an LSDSCC dataset folder (no stats.json)")
    stats = read_json(path, "stats file")  # errors name the file and line
    if not isinstance(stats, dict) or not isinstance(stats.get("options"), dict) or "subreddits" not in stats["options"]:
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


@dataclass(frozen=True)
class ExportIdsConfig:
    """``multiref lsdscc export-ids``: the ids file of a corpus folder (:func:`write_ids`)."""

    dataset: str | None = option(None, flag="--dataset", required=True, metavar="FOLDER",
                                 help="an LSDSCC corpus folder (lsdscc build)")
    output: str | None = option(None, flag="--output", required=True, metavar="IDS",
                                help="the ids file to write (JSON: ids, build options and dump digests; no text)")


@dataclass(frozen=True)
class RehydrateConfig:
    """``multiref lsdscc rehydrate``: a corpus folder rebuilt from an ids file and the user's dumps."""

    ids: str | None = option(None, flag="--ids", required=True, metavar="IDS", help="an ids file written by export-ids")
    input: tuple = option((), flag="--input", repeat=True, required=True, metavar="PATH_OR_GLOB",
                          help="your dump files, folders or globs (repeatable)")
    output: str | None = option(None, flag="--output", required=True, metavar="FOLDER",
                                help="the dataset folder to build")


def write_ids(config: ExportIdsConfig) -> dict:
    """Write the ids release of ``config.dataset`` to ``config.output`` (local: a temporary
    name, then a rename; never a file of the dataset it reads); return the release."""
    from multiref.output.file_output import check_output, write_atomically
    from multiref.util.location import is_remote

    check_output(config.output, "--output", [config.dataset])  # never a file of the dataset it reads
    release = export_ids(config.dataset)
    if is_remote(config.output):
        from multiref.beam.writer import write_file

        write_file(config.output, ids_text(release).encode("utf-8"))
    else:
        write_atomically(config.output, ids_text(release).encode("utf-8"))
    return release


def ids_text(release: dict) -> str:
    """The ids file's text (sorted keys, one file per line of ``files``: small diffs)."""
    return json.dumps(release, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n"


def read_ids(path: str) -> dict:
    """An ids release file; UserError naming it when it is not one."""
    from multiref.util.files import read_json

    release = read_json(path, "ids file")  # missing, a folder, not UTF-8, bad JSON, 4,300 digits: file:line
    if not isinstance(release, dict) or release.get("format") != FORMAT:
        raise UserError(f"{path}: not an ids release (expected \"format\": \"{FORMAT}\")")
    for key in ("options", "files"):
        if not isinstance(release.get(key), dict):
            raise UserError(f"{path}: not an ids release (no {key!r} object)")
    _check_options(path, release["options"])
    _check_sources(path, release.get("source_files", []))
    for rel, entry in release["files"].items():
        _check_file_entry(path, rel, entry)
    return release


def _check_options(path: str, options: dict) -> None:
    """Option values are JSON scalars or lists of them; no string reads as a flag."""
    for key, value in options.items():
        if not _OPTION.match(key):
            raise UserError(f"{path}: options: {json.dumps(key)[:60]} is not an option name")
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, (dict, list)) or (isinstance(v, str) and v.startswith("-")):
                raise UserError(f"{path}: options.{key}: {json.dumps(v)[:60]} is not a value of that option")
            if isinstance(v, float) and v != v or v in (float("inf"), float("-inf")):
                raise UserError(f"{path}: options.{key}: {v} is not a finite number")


def _check_sources(path: str, sources) -> None:
    if not isinstance(sources, list):
        raise UserError(f"{path}: source_files: expected a list, got {type(sources).__name__}")
    for i, f in enumerate(sources):
        if not (isinstance(f, dict) and isinstance(f.get("name"), str) and isinstance(f.get("sha256"), str)):
            raise UserError(f"{path}: source_files[{i}]: expected an object with 'name' and 'sha256' strings")


def _check_file_entry(path: str, rel: str, entry) -> None:
    """One ``files`` entry: a parquet file of a corpus config, its config and split, rows of ids."""
    where = f"{path}: files[{json.dumps(rel)[:80]}]"
    m = _REL.match(rel)
    if not m:
        raise UserError(f"{where}: not a corpus parquet file (expected single_turn/ or multi_turn/<split>-NNNNN-of-"
                        "NNNNN.parquet)")
    if not isinstance(entry, dict):
        raise UserError(f"{where}: expected an object with config, split and rows, got {type(entry).__name__}")
    for key in ("config", "split", "rows"):
        if key not in entry or entry[key] is None:
            raise UserError(f"{where}: no {key!r}")
    if (entry["config"], entry["split"]) != (m[1], m[2]):
        raise UserError(f"{where}: config {entry['config']!r} and split {entry['split']!r} do not match the file name")
    if not isinstance(entry["rows"], list):
        raise UserError(f"{where}: 'rows' must be a list, got {type(entry['rows']).__name__}")
    for i, row in enumerate(entry["rows"]):
        if not _row_ok(entry["config"], row):
            shape = ("[thread_id, query_id, response_id]" if entry["config"] == "single_turn"
                     else "[thread_id, [comment ids]]")
            raise UserError(f"{where}: row {i}: expected {shape} of Reddit ids, got {json.dumps(row)[:60]}")


def _row_ok(config: str, row) -> bool:
    if not isinstance(row, list):
        return False
    if config == "single_turn":
        return len(row) == 3 and all(isinstance(x, str) and _ID.match(x) for x in row)
    return (len(row) == 2 and isinstance(row[0], str) and bool(_ID.match(row[0])) and isinstance(row[1], list)
            and bool(row[1]) and all(isinstance(x, str) and _ID.match(x) for x in row[1]))


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
