"""Writing the LSDSCC corpus folder: parquet schemas, shards, dead letters, stats, plots, card.

The Beam pipeline writes parquet shards and small JSON summaries under ``FOLDER/_work``;
:func:`finalize` (run once on the driver after the pipeline) turns those and the Beam
counters into ``stats.json``, the PNG plots, the README dataset card (via
:func:`multiref.hfdata.add_config`) and removes ``_work``. Columns follow CONTRACTS.md.
"""

from __future__ import annotations

import io
import os
import shutil
from typing import Any, Iterable, Mapping

CONFIGS = ("single_turn", "multi_turn")
SPLITS = ("train", "validation")
WORK = "_work"
NAMESPACE = "lsdscc"


def schema(config: str):
    """The pyarrow schema of a corpus config (CONTRACTS.md)."""
    import pyarrow as pa

    if config == "single_turn":
        return pa.schema(
            [
                ("id", pa.string()), ("thread_id", pa.string()), ("query_id", pa.string()),
                ("response_id", pa.string()), ("query", pa.string()), ("response", pa.string()),
                ("created_utc", pa.int64()), ("response_number", pa.int64()),
            ]
        )
    if config == "multi_turn":
        return pa.schema(
            [
                ("id", pa.string()), ("thread_id", pa.string()), ("comment_ids", pa.list_(pa.string())),
                ("turns", pa.list_(pa.string())), ("created_utc", pa.int64()),
            ]
        )
    raise ValueError(f"unknown corpus config {config!r}")


def is_remote(path: str) -> bool:
    return "://" in path


def join(folder: str, *parts: str) -> str:
    if is_remote(folder):
        return "/".join([folder.rstrip("/")] + list(parts))
    return os.path.join(folder, *parts)


def write_bytes(path: str, data: bytes) -> None:
    """Write a whole file locally or through Beam's FileSystems (gs://...)."""
    if is_remote(path):
        from apache_beam.io.filesystems import FileSystems

        with FileSystems.create(path) as fh:
            fh.write(data)
        return
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)


def read_bytes(path: str) -> bytes:
    if is_remote(path):
        from apache_beam.io.filesystems import FileSystems

        with FileSystems.open(path) as fh:
            return fh.read()
    with open(path, "rb") as fh:
        return fh.read()


def list_files(folder: str) -> list:
    """Paths of the files directly inside ``folder`` (local or gs://...), sorted; [] if none."""
    if is_remote(folder):
        from apache_beam.io.filesystems import FileSystems

        pattern = folder.rstrip("/") + "/*"
        return sorted(m.path for r in FileSystems.match([pattern]) for m in r.metadata_list)
    try:
        names = os.listdir(folder)
    except FileNotFoundError:
        return []
    return sorted(os.path.join(folder, n) for n in names if os.path.isfile(os.path.join(folder, n)))


def parquet_bytes(rows: Iterable[Mapping[str, Any]], config: str) -> bytes:
    """One parquet file's bytes for corpus config ``config``; identical rows give identical bytes."""
    from multiref.hfdata import parquet_bytes as rows_to_parquet

    return rows_to_parquet(rows, schema(config))


def shard_name(config: str, split: str, index: int, num_shards: int) -> str:
    return f"{config}/{split}-{index:05d}-of-{num_shards:05d}.parquet"


def prepare_folder(folder: str) -> None:
    """Remove what an earlier run wrote (so the folder holds this run only); check it is writable.

    Raises UserError naming the folder when it cannot be written.
    """
    from multiref.errors import UserError

    if is_remote(folder):
        return
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise UserError(f"output is not a folder: {folder}")
    try:
        os.makedirs(folder, exist_ok=True)
        for name in CONFIGS + ("rejected", "plots", WORK):
            shutil.rmtree(os.path.join(folder, name), ignore_errors=True)
        for name in ("README.md", "dataset_meta.json", "stats.json"):
            if os.path.exists(os.path.join(folder, name)):
                os.remove(os.path.join(folder, name))
        probe = os.path.join(folder, ".write-test")
        with open(probe, "w") as fh:
            fh.write("ok")
        os.remove(probe)
    except OSError as exc:
        raise UserError(f"cannot write to output folder {folder}: {exc.strerror or exc}") from None


def _histogram_items(hist: Mapping) -> list:
    return sorted((int(k), int(v)) for k, v in hist.items())


def coverage(hist: Mapping, limit: int) -> float:
    total = sum(hist.values())
    return round(sum(v for k, v in hist.items() if int(k) <= limit) / total, 6) if total else 0.0


def survival(counts: Mapping[str, int]) -> list:
    """(stage, remaining) rows: records read down to the single-turn pairs kept."""
    c = lambda name: int(counts.get(name, 0))  # noqa: E731
    read = c("records-read")
    malformed = c("rejected-missing-field") + c("rejected-wrong-type") + c("rejected-unknown-kind")
    stages = [("records read (valid JSON)", read)]
    n = read - malformed
    stages.append(("well-formed", n))
    n -= c("dropped-other-subreddit")
    stages.append(("in the subreddits", n))
    n -= c("dropped-deleted") + c("dropped-removed") + c("dropped-deleted-later")
    stages.append(("not deleted/removed", n))
    n -= c("dropped-bot")
    stages.append(("not by a bot", n))
    n -= c("dropped-duplicate-id")
    stages.append(("unique posts", n))
    pairs = c("pairs-candidate")
    stages.append(("pairs (parent present)", pairs))
    pairs -= c("dropped-empty-after-cleaning")
    stages.append(("non-empty after cleaning", pairs))
    pairs -= c("dropped-query-too-long") + c("dropped-response-too-long")
    stages.append(("within length limits", pairs))
    pairs -= c("dropped-duplicate")
    stages.append(("not a duplicate", pairs))
    return stages


def plot_all(folder: str, stats: dict) -> list[str]:
    """The four PNG plots of the stats report; deterministic bytes. Returns their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "multiref"
    paths = []

    def save(fig, name):
        path = join(folder, "plots", name)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
        plt.close(fig)
        write_bytes(path, buf.getvalue())
        paths.append(path)

    noise = stats["vocabulary_noise"]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    kinds = ["over_long", "non_ascii"]
    ax.bar([k.replace("_", "-") + " (types)" for k in kinds], [100 * noise[f"{k}_type_share"] for k in kinds], color="#c44")
    ax.bar([k.replace("_", "-") + " (tokens)" for k in kinds], [100 * noise[f"{k}_token_share"] for k in kinds], color="#48c")
    ax.set_ylabel("% of raw vocabulary")
    ax.set_title(f"Vocabulary noise (raw vocabulary: {noise['vocabulary_types']:,} words)")
    fig.tight_layout()
    save(fig, "vocabulary_noise.png")

    fig, ax = plt.subplots(figsize=(6, 3.5))
    for name, hist, limit, color in (
        ("query", stats["lengths"]["query_histogram"], stats["options"]["max_query_tokens"], "#c44"),
        ("response", stats["lengths"]["response_histogram"], stats["options"]["max_response_tokens"], "#48c"),
    ):
        items = _histogram_items(hist)
        total = sum(v for _, v in items) or 1
        xs, ys, run = [], [], 0
        for k, v in items:
            run += v
            xs.append(k)
            ys.append(100 * run / total)
        ax.step(xs, ys, where="post", label=f"{name} (limit {limit}: {100 * coverage(hist, limit):.1f}%)", color=color)
        ax.axvline(limit, color=color, linestyle=":")
    ax.set_xlabel("tokens")
    ax.set_ylabel("% of pairs with at most x tokens")
    ax.set_title("Length coverage (before pruning)")
    ax.legend()
    fig.tight_layout()
    save(fig, "length_coverage.png")

    fig, ax = plt.subplots(figsize=(6, 3.5))
    items = _histogram_items(stats["responses_per_query"]["histogram"])
    ax.bar([k for k, _ in items], [v for _, v in items], color="#4a4")
    ax.set_xlabel("responses per query (response number)")
    ax.set_ylabel("queries")
    ax.set_title("Responses per query (single_turn, all splits)")
    fig.tight_layout()
    save(fig, "responses_per_query.png")

    fig, ax = plt.subplots(figsize=(7, 4))
    stages = stats["survival"]
    ax.barh([s["stage"] for s in stages][::-1], [s["remaining"] for s in stages][::-1], color="#888")
    for i, s in enumerate(stages[::-1]):
        ax.text(s["remaining"], i, f" {s['remaining']:,}", va="center", fontsize=8)
    ax.set_xlabel("records / pairs remaining")
    ax.set_title("Survival by stage")
    fig.tight_layout()
    save(fig, "survival.png")
    return paths
