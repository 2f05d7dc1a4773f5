"""Hugging Face dataset folders: parquet shards plus a README dataset card.

A dataset folder written by our pipelines looks like::

    FOLDER/
      README.md                 # YAML front matter: configs, dataset_info; then the card
      dataset_meta.json         # machine-readable twin of the card (options, counts, configs)
      <config>/<split>-00000-of-00001.parquet
      rejected/ ...             # dead-letter records (written by the pipelines)
      stats.json

and loads with ``datasets.load_dataset(FOLDER, "<config>")`` (datasets >= 4: no loading
script, the README's ``configs`` entry says which files make which split).

Several jobs add configs to one folder (the LSDSCC corpus job writes ``single_turn`` and
``multi_turn``; the test-set job adds ``test_candidates``; annotation import adds
``test_grouped``). Each calls :func:`add_config`, which merges into ``dataset_meta.json`` and
rewrites the README from it, so the card always describes every config present.

Output is byte-reproducible: rows are written in the order given (callers sort them),
parquet files carry no timestamps, and the card is rendered from sorted metadata.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

META_FILE = "dataset_meta.json"


@dataclass(frozen=True)
class ConfigInfo:
    """One dataset config: its splits, features, how it was made and what it counts."""

    name: str
    description: str
    splits: Mapping[str, int]  # split name -> number of rows
    features: Any  # a pyarrow.Schema
    options: Mapping[str, Any] = field(default_factory=dict)  # every option that changes the data
    counts: Mapping[str, Any] = field(default_factory=dict)  # filter counters and totals
    data_files: Mapping[str, str] | None = None  # split -> glob (default <name>/<split>-*.parquet)

    def files(self) -> dict:
        if self.data_files is not None:
            return dict(self.data_files)
        return {split: f"{self.name}/{split}-*.parquet" for split in self.splits}


def shard_path(folder: str, config: str, split: str, index: int = 0, num_shards: int = 1) -> str:
    """The path of one parquet shard, in the naming ``datasets`` uses."""
    return os.path.join(folder, config, f"{split}-{index:05d}-of-{num_shards:05d}.parquet")


def shard_index(key: str, num_shards: int) -> int:
    """The shard of an example with stable key ``key``: a sha1 of the key (never Python's
    ``hash``, which changes between processes), so every runner and rerun agrees."""
    import hashlib

    if num_shards <= 1:
        return 0
    digest = hashlib.sha1(f"shard:{key}".encode("utf-8")).digest()
    return int(int.from_bytes(digest[:8], "big") / 2**64 * num_shards)


def rows_table(rows: Iterable[Mapping[str, Any]], schema):
    """A pyarrow Table of ``rows``: dicts keyed by the schema's field names (missing keys ->
    null), or tuples holding the fields in the schema's order."""
    import pyarrow as pa

    rows = list(rows)
    if rows and isinstance(rows[0], tuple):
        columns = list(zip(*rows)) if rows else [()] * len(schema)
        return pa.Table.from_arrays([pa.array(list(c), type=f.type) for c, f in zip(columns, schema)], schema=schema)
    return pa.Table.from_pydict({f.name: [r.get(f.name) for r in rows] for f in schema}, schema=schema)


def write_table(table, where) -> None:
    """Write a pyarrow Table as parquet to a path or a binary file object, with the one set of
    writer options every dataset of this project uses (identical tables give identical bytes).

    An empty table is written as its schema with no row group: a 0-row row group makes
    ``datasets.load_dataset`` fail (``ArrowInvalid: BatchSize must be greater than 0``).
    """
    import pyarrow.parquet as pq

    if table.num_rows == 0:
        writer = pq.ParquetWriter(where, table.schema, compression="snappy", write_statistics=True)
        writer.close()
        return
    pq.write_table(table, where, compression="snappy", write_statistics=True)


def parquet_bytes(rows: Iterable[Mapping[str, Any]], schema) -> bytes:
    """The bytes of one parquet file holding ``rows`` (for writers that are not local files)."""
    import io

    buf = io.BytesIO()
    write_table(rows_table(rows, schema), buf)
    return buf.getvalue()


def write_parquet(path: str, rows: Iterable[Mapping[str, Any]], schema) -> int:
    """Write ``rows`` (dicts keyed by the schema's field names) to one parquet file.

    Returns the number of rows. The file is byte-identical for identical rows.
    """
    table = rows_table(rows, schema)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    write_table(table, path)
    return table.num_rows


#: The arrow types the datasets here use, as ``datasets`` names them in a card.
_DTYPES = {"string": "string", "int64": "int64", "int32": "int32", "double": "float64", "float": "float32",
           "bool": "bool"}


def features_yaml(schema) -> list:
    """``datasets.Features.from_arrow_schema(schema)._to_yaml_list()``: written out here for the
    types above, lists and structs of them (importing ``datasets`` is 0.3 s of every build);
    ``datasets`` itself for any other type or a schema carrying its own feature metadata.
    tests/test_hfdata_features.py compares the two."""
    if not (schema.metadata and b"huggingface" in schema.metadata):
        try:
            return [{"name": f.name, **_type_yaml(f.type)} for f in schema]
        except KeyError:
            pass
    from datasets import Features

    return Features.from_arrow_schema(schema)._to_yaml_list()


def _type_yaml(arrow_type) -> dict:
    """One field's type as the card gives it (KeyError: a type left to ``datasets``)."""
    import pyarrow as pa

    if pa.types.is_struct(arrow_type):
        return {"struct": [{"name": f.name, **_type_yaml(f.type)} for f in arrow_type]}
    if pa.types.is_list(arrow_type):
        inner = _type_yaml(arrow_type.value_type)
        if "dtype" in inner:
            return {"list": inner["dtype"]}
        if "struct" in inner:
            return {"list": inner["struct"]}
        raise KeyError("list")
    return {"dtype": _DTYPES[str(arrow_type)]}


def load_meta(folder: str) -> dict:
    path = os.path.join(folder, META_FILE)
    if not os.path.exists(path):
        return {"title": None, "summary": None, "configs": {}, "sections": {}}
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def add_config(
    folder: str,
    info: ConfigInfo,
    *,
    title: str | None = None,
    summary: str | None = None,
    sections: Mapping[str, str] | None = None,
    card_data: Mapping[str, Any] | None = None,
    citations: Iterable[str] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> None:
    """Record ``info`` in the folder's metadata and rewrite its README card.

    ``title`` and ``summary`` set the card's heading and opening paragraph (kept from an
    earlier call when not given); ``sections`` adds or replaces named Markdown sections.
    ``card_data``: the Hub's card fields (``license``, ``language``, ``task_categories``,
    ``pretty_name``, ...: :func:`card_front`); ``citations``: BibTeX entries for the card's
    citation block; ``extra``: more top-level keys of ``dataset_meta.json`` (e.g. the source
    files). Each replaces what an earlier call gave when given.
    """
    meta = load_meta(folder)
    if title:
        meta["title"] = title
    if summary:
        meta["summary"] = summary
    if card_data is not None:
        meta["card_data"] = _jsonable(dict(card_data))
    if citations is not None:
        meta["citations"] = list(citations)
    meta.update(_jsonable(dict(extra or {})))
    meta.setdefault("sections", {}).update(dict(sections or {}))
    meta["configs"][info.name] = config_entry(info, _split_bytes(folder, info.files()))
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, META_FILE), "w", encoding="utf-8") as fh:
        fh.write(meta_text(meta))
    write_card(folder, meta)


def config_entry(info: ConfigInfo, split_bytes: Mapping[str, int]) -> dict:
    """The ``dataset_meta.json`` entry of one config (``split_bytes``: split -> uncompressed
    parquet bytes, as the card's ``dataset_info`` states them)."""
    return {
        "description": info.description,
        "splits": dict(info.splits),
        "split_bytes": dict(split_bytes),
        "data_files": info.files(),
        "features": features_yaml(info.features),
        "options": _jsonable(info.options),
        "counts": _jsonable(info.counts),
    }


def meta_text(meta: Mapping[str, Any]) -> str:
    """The text of ``dataset_meta.json``."""
    return json.dumps(meta, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _split_bytes(folder: str, data_files: Mapping[str, str]) -> dict:
    """Uncompressed size of each split's parquet data (from the file footers, cheap)."""
    import glob

    import pyarrow.parquet as pq

    sizes = {}
    for split, pattern in data_files.items():
        total = 0
        for path in sorted(glob.glob(os.path.join(folder, pattern))):
            md = pq.ParquetFile(path).metadata
            total += sum(md.row_group(i).total_byte_size for i in range(md.num_row_groups))
        sizes[split] = total
    return sizes


def _jsonable(value):
    return json.loads(json.dumps(value, sort_keys=True, default=str))


def write_card(folder: str, meta: Mapping[str, Any]) -> str:
    """Render README.md (YAML front matter + Markdown) from ``meta``; return its path."""
    path = os.path.join(folder, "README.md")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(card_text(meta, os.path.basename(os.path.abspath(folder))))
    return path


def card_text(meta: Mapping[str, Any], default_title: str) -> str:
    """The README card (YAML front matter + Markdown) of ``meta``; ``default_title`` when
    ``meta`` has none (the folder's name)."""
    import yaml

    configs = meta.get("configs", {})
    names = sorted(configs)
    front = {
        **card_front(meta),
        "configs": [
            {
                "config_name": name,
                "data_files": [
                    {"split": split, "path": pattern}
                    for split, pattern in sorted(configs[name]["data_files"].items())
                ],
            }
            for name in names
        ],
        "dataset_info": [
            {
                "config_name": name,
                "features": configs[name]["features"],
                "splits": [
                    {"name": split, "num_bytes": configs[name].get("split_bytes", {}).get(split, 0), "num_examples": n}
                    for split, n in sorted(configs[name]["splits"].items())
                ],
            }
            for name in names
        ],
    }
    lines = ["---", yaml.safe_dump(front, sort_keys=False, allow_unicode=True).rstrip(), "---", ""]
    lines.append(f"# {meta.get('title') or default_title}")
    lines.append("")
    if meta.get("summary"):
        lines += [meta["summary"], ""]
    lines += ["Made by [multiref-dialog](https://github.com/multiref-dialog). Load a config with:", ""]
    lines += ["```python", "import datasets", ""]
    for name in names:
        lines.append(f'ds = datasets.load_dataset("path/to/this/folder", "{name}")')
    lines += ["```", ""]
    for name in names:
        c = configs[name]
        lines += [f"## Config `{name}`", "", c["description"], ""]
        lines += ["| split | rows |", "| --- | ---: |"]
        lines += [f"| {s} | {n:,} |" for s, n in sorted(c["splits"].items())]
        lines.append("")
        if c.get("options"):
            lines += ["Options used (every option that changes the data):", "", "```json"]
            lines += [json.dumps(c["options"], indent=2, sort_keys=True, ensure_ascii=False), "```", ""]
        if c.get("counts"):
            lines += ["Counts (records kept and dropped, by reason):", "", "```json"]
            lines += [json.dumps(c["counts"], indent=2, sort_keys=True, ensure_ascii=False), "```", ""]
    for heading, body in sorted(meta.get("sections", {}).items()):
        lines += [f"## {heading}", "", body.rstrip(), ""]
    if meta.get("citations"):
        lines += ["## Citation", "", "Please cite the papers this dataset is built from:", ""]
        for entry in meta["citations"]:
            lines += ["```bibtex", entry.strip(), "```", ""]
    return "\n".join(lines)


#: The Hub's size categories (``datasets/utils/resources/size_categories.json``), by upper bound.
SIZE_CATEGORIES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"),
                   (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M"), (1_000_000_000, "100M<n<1B"),
                   (10**10, "1B<n<10B"), (10**11, "10B<n<100B"), (10**12, "100B<n<1T"))


def size_category(rows: int) -> str:
    """The Hub's ``size_categories`` value for a dataset of ``rows`` examples."""
    for bound, name in SIZE_CATEGORIES:
        if rows < bound:
            return name
    return "n>1T"


def card_front(meta: Mapping[str, Any]) -> dict:
    """The Hub fields of the card's YAML (before ``configs``): ``meta["card_data"]`` in the
    Hub's usual order, with ``size_categories`` from the largest config's rows. {} when the
    metadata has no card data (an older folder)."""
    data = dict(meta.get("card_data") or {})
    if not data:
        return {}
    largest = max((sum(c["splits"].values()) for c in meta.get("configs", {}).values()), default=0)
    data["size_categories"] = [size_category(largest)]
    order = ("pretty_name", "license", "license_name", "license_link", "language", "multilinguality",
             "annotations_creators", "language_creators", "source_datasets", "task_categories", "task_ids",
             "size_categories", "tags")
    return {**{k: data[k] for k in order if k in data}, **{k: v for k, v in sorted(data.items()) if k not in order}}
