"""Writing the LSDSCC corpus folder: parquet schemas, stats, plots, card. Columns follow docs/corpus.md#output-folder-and-columns.

The Beam pipeline writes the parquet shards, ``rejected/rejected.jsonl`` and ``stats.json``
(:func:`build_stats`, from counts the pipeline computed as data, so it is the same on every
runner); the driver then draws the plots (:func:`plot_all`) and writes the dataset card
(:func:`write_cards`) from ``stats.json``.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from collections import Counter
from typing import Mapping

from multiref.util.location import is_remote

CONFIGS = ("single_turn", "multi_turn")
SPLITS = ("train", "validation")
WORK = "_work"  # an older build's spill folder, removed by prepare_folder
DELETION_REASONS = ("initially-deleted", "removed-later", "deleted-later")  # lsdscc.corpus.deletions.REASONS


def responses_per_query(histogram: Mapping[str, int]) -> dict:
    """The ``responses_per_query`` entry of ``stats.json`` for a histogram ``{k: queries}``."""
    rpq = {int(k): int(v) for k, v in histogram.items()}
    return {
        "histogram": {str(k): v for k, v in sorted(rpq.items())},
        "queries": sum(rpq.values()),
        "strata": {
            "lt3": sum(v for k, v in rpq.items() if k < 3),
            "3to5": sum(v for k, v in rpq.items() if 3 <= k <= 5),
            "gt5": sum(v for k, v in rpq.items() if k > 5),
        },
    }


def schema(config: str):
    """The pyarrow schema of a corpus config (docs/corpus.md#output-folder-and-columns)."""
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


def write_bytes(path: str, data: bytes) -> None:
    """A whole file, local or remote, written as the Beam jobs write theirs (temporary name,
    then rename: :func:`multiref.beam.writer.write_file`)."""
    from multiref.beam.writer import write_file

    write_file(path, data)


def join(folder: str, *parts: str) -> str:
    """A path under ``folder``, local or remote (:func:`multiref.beam.writer.join`)."""
    from multiref.beam.writer import join as beam_join

    return beam_join(folder, *parts)


def prepare_folder(folder: str) -> None:
    """Remove what an earlier run wrote (so the folder holds this run only); check it is writable.

    Raises UserError naming the folder when it cannot be written, and
    :class:`multiref.output.publish_target.NotOurFolder` when it holds anything but a dataset this
    tool published (the builds pass a fresh staging folder: :mod:`multiref.output.publish`).
    """
    from multiref.util.errors import UserError
    from multiref.output.publish_target import check_local

    if is_remote(folder):
        return
    if os.path.exists(folder) and not os.path.isdir(folder):
        raise UserError(f"output is not a folder: {folder}")
    check_local(folder)
    try:
        os.makedirs(folder, exist_ok=True)
        clear_folder(folder)
        probe = os.path.join(folder, ".write-test")
        with open(probe, "w") as fh:
            fh.write("ok")
        os.remove(probe)
    except OSError as exc:
        raise UserError(f"cannot write to output folder {folder}: {exc.strerror or exc}") from None


def clear_folder(folder: str) -> None:
    """Remove what a corpus job writes into the local ``folder`` (the configs, ``rejected/``,
    plots, work files, card, metadata and ``stats.json``); anything else stays."""
    for name in CONFIGS + ("rejected", "plots", WORK):
        shutil.rmtree(os.path.join(folder, name), ignore_errors=True)
    for name in ("README.md", "dataset_meta.json", "stats.json"):
        if os.path.exists(os.path.join(folder, name)):
            os.remove(os.path.join(folder, name))


def _shard_totals(shards, counts: Mapping) -> tuple:
    """From the writer's shard summaries: rows per config and split, queries by response
    number, and ``counts`` with the ``kept-*`` counts of every split written."""
    splits = {c: {s: 0 for s in SPLITS} for c in CONFIGS}
    rpq: dict = {}
    counts = dict(counts)
    written = set()
    for config, split, _, rows, extra in shards:
        splits[config][split] += rows
        written.add((config, split))
        for k, v in (extra or {}).items():
            rpq[int(k)] = rpq.get(int(k), 0) + v
    for config in CONFIGS:
        for split in SPLITS:
            if (config, split) in written:
                counts[f"kept-{config.replace('_', '-')}-{split}"] = splits[config][split]
    return splits, rpq, counts


def build_stats(options: Mapping, input_names, counts: Mapping, vocabulary: Mapping, lengths: Mapping,
                shards, schema: Mapping | None = None, files=None) -> dict:
    """The ``stats.json`` report from what the pipeline computed.

    ``options``: ``CorpusConfig.as_options()``; ``counts``: the summed tallies; ``vocabulary``:
    :func:`lsdscc.corpus.vocab.vocabulary_summary` (or {} for an empty corpus); ``lengths``:
    ``{"query": {len: n}, "response": {len: n}}``; ``shards``: the writer's shard summaries
    ``(config, split, shard, rows, response-number histogram)``. The ``kept-*`` counts and
    the split sizes come from the shards. ``schema``: ``{"months", "fields_by_era"}`` of the
    records read (:func:`lsdscc.corpus.eras.merge_schema`); ``files``: the input files' summaries
    (:class:`lsdscc.corpus.provenance.FileTally`), listed as ``files`` (names, bytes, SHA-256,
    records, first/last ``created_utc``).
    """
    from lsdscc.corpus import eras

    schema = dict(schema or {})
    months = dict(schema.get("months", {}))
    splits, rpq, counts = _shard_totals(shards, counts)
    noise = dict(vocabulary.get("noise", {"vocabulary_types": 0, "vocabulary_tokens": 0}))
    for key in ("over_long", "non_ascii"):
        for suffix in ("types", "tokens", "type_share", "token_share"):
            noise.setdefault(f"{key}_{suffix}", 0)
    q_hist, r_hist = lengths.get("query", {}), lengths.get("response", {})
    return {
        "options": dict(options),
        "inputs": list(input_names),
        "counts": dict(sorted(counts.items())),
        "splits": splits,
        "vocabulary_noise": noise,
        "vocabulary": {k: v for k, v in vocabulary.items() if k != "noise"},
        "lengths": {
            "query_histogram": {str(k): v for k, v in sorted(q_hist.items(), key=lambda kv: int(kv[0]))},
            "response_histogram": {str(k): v for k, v in sorted(r_hist.items(), key=lambda kv: int(kv[0]))},
            "query_coverage_at_limit": coverage(q_hist, options["max_query_tokens"]),
            "response_coverage_at_limit": coverage(r_hist, options["max_response_tokens"]),
        },
        "responses_per_query": responses_per_query(rpq),
        "survival": [{"stage": s, "remaining": n} for s, n in survival(counts)],
        "files": list(files or []),
        "months": months,
        "low_months": eras.low_months(months),
        "fields_by_era": dict(schema.get("fields_by_era", {})),
    }


def stats_json(stats: Mapping) -> bytes:
    import json

    return (json.dumps(stats, indent=2, sort_keys=True) + "\n").encode("utf-8")


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
    n -= sum(c(f"dropped-{r}") for r in ("deleted", "removed") + DELETION_REASONS)
    stages.append(("not deleted/removed", n))
    n -= c("dropped-bot")
    stages.append(("not by a bot", n))
    n -= c("dropped-duplicate-id") + c("dropped-deleted-in-another-copy")
    stages.append(("unique posts", n))
    if "dropped-out-of-range" in counts:
        n -= c("dropped-out-of-range")
        stages.append(("threads in the time range", n))
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
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure  # (not pyplot: 0.2 s more to import, and no figure to close)

    paths = []
    with matplotlib.rc_context():  # matplotlib's own defaults, whatever the process set before
        matplotlib.rcdefaults()  # (another report's font size, a user's style): the same bytes
        matplotlib.rcParams["svg.hashsalt"] = "multiref"
        for name, size, draw in (("vocabulary_noise.png", (6, 3.5), _plot_noise),
                                 ("length_coverage.png", (6, 3.5), _plot_length_coverage),
                                 ("responses_per_query.png", (6, 3.5), _plot_responses_per_query),
                                 ("survival.png", (7, 4), _plot_survival)):
            fig = Figure(figsize=size)
            FigureCanvasAgg(fig)
            ax = fig.subplots()
            draw(ax, stats)
            fig.tight_layout()
            path = join(folder, "plots", name)
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
            write_bytes(path, buf.getvalue())
            paths.append(path)
    return paths


def _plot_noise(ax, stats: dict) -> None:
    """Bars: the over-long and non-ASCII shares of the raw vocabulary, by type and by token."""
    noise = stats["vocabulary_noise"]
    kinds = ["over_long", "non_ascii"]
    ax.bar([k.replace("_", "-") + "\n(types)" for k in kinds], [100 * noise[f"{k}_type_share"] for k in kinds], color="#c44")
    ax.bar([k.replace("_", "-") + "\n(tokens)" for k in kinds], [100 * noise[f"{k}_token_share"] for k in kinds], color="#48c")
    ax.set_ylabel("% of raw vocabulary")
    ax.set_title(f"Vocabulary noise (raw vocabulary: {noise['vocabulary_types']:,} words)")


def _plot_length_coverage(ax, stats: dict) -> None:
    """Steps: the cumulative share of pairs by query and response length, with the limits."""
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


def _plot_responses_per_query(ax, stats: dict) -> None:
    """Bars: the published single_turn's queries by their number of pairs (all splits)."""
    items = _histogram_items(stats["responses_per_query"]["histogram"])
    ax.bar([k for k, _ in items], [v for _, v in items], color="#4a4")
    ax.set_xlabel("responses per query (published pairs)")
    ax.set_ylabel("queries")
    pairs = sum(k * v for k, v in items)
    ax.set_title(f"Responses per query (published single_turn: {sum(v for _, v in items):,} queries, {pairs:,} pairs)",
                 fontsize=10)


def _plot_survival(ax, stats: dict) -> None:
    """Horizontal bars: records and pairs remaining after each stage."""
    stages = stats["survival"]
    ax.barh([s["stage"] for s in stages][::-1], [s["remaining"] for s in stages][::-1], color="#888")
    for i, s in enumerate(stages[::-1]):
        ax.text(s["remaining"], i, f" {s['remaining']:,}", va="center", fontsize=8)
    ax.set_xlabel("records / pairs remaining")
    ax.set_title(f"Survival by stage\n(published single_turn: {stages[-1]['remaining']:,} pairs)" if stages
                 else "Survival by stage")


DESCRIPTIONS = {
    "single_turn": "Single-turn (query, response) pairs: query = the parent post (a submission's title and "
    "body for top-level comments), response = the reply; cleaned, tokenized, lowercased text "
    "(docs/algorithms.md §1). `response_number` = responses of the query in the corpus.",
    "multi_turn": "Root-to-leaf conversations of at least {min_turns} turns: the submission, then "
    "each comment down to a leaf; cleaned like `single_turn`.",
}


def card_splits(stats: Mapping, config: str) -> tuple[dict, list]:
    """The splits of ``config`` the card lists, and the empty ones it leaves out (an empty
    split would make ``datasets.load_dataset`` fail: "corresponds to no data")."""
    splits, empty = {}, []
    for split, n in stats["splits"][config].items():
        if split == "validation" and stats["options"]["validation_fraction"] == 0:
            continue
        if n:
            splits[split] = n
        else:
            empty.append(split)
    return splits, empty


def write_cards(folder: str, stats: Mapping, warn=print) -> list:
    """The README dataset card and ``dataset_meta.json`` of the corpus configs, from
    ``stats.json``'s values. Empty splits (and configs with no rows) are left out of the
    card, each with a warning through ``warn``; returns the warnings."""
    from multiref.output import hfdata

    local = folder
    if is_remote(folder):
        import tempfile

        local = tempfile.mkdtemp(prefix="lsdscc-card-")
    options, counts = stats["options"], stats["counts"]
    shared = {k: v for k, v in counts.items() if not k.startswith(("kept-", "multi-turn"))}
    from lsdscc.corpus import release_card

    sections = {"Statistics": statistics_section(stats), **release_card.sections(stats)}
    warnings = []
    for name in CONFIGS:
        splits, empty = card_splits(stats, name)
        for split in empty:
            warnings.append(f"{name}/{split} has no rows; it is left out of the dataset card")
        if not splits:
            continue
        prefix = ("kept-" + name.replace("_", "-"), "multi-turn" if name == "multi_turn" else "~")
        own = {k: v for k, v in counts.items() if k.startswith(prefix)}
        info = hfdata.ConfigInfo(
            name=name, description=DESCRIPTIONS[name].format(min_turns=options["min_turns"]), splits=splits,
            features=schema(name), options=options, counts=dict(sorted({**shared, **own}.items())),
            data_files={s: f"{name}/{s}-*.parquet" for s in splits})
        hfdata.add_config(local, info, title="LSDSCC: r/movies conversations",
                          summary="A large-scale domain-specific conversational corpus built from r/movies threads "
                          "(Xu et al. 2018), rebuilt with multiref-dialog.", sections=sections,
                          card_data=release_card.CARD_DATA, citations=release_card.CITATIONS,
                          extra={"source_files": stats.get("files", [])})
    for message in warnings:
        warn(f"warning: {message}")
    if local != folder:
        for name in ("README.md", "dataset_meta.json"):
            if os.path.exists(os.path.join(local, name)):
                with open(os.path.join(local, name), "rb") as fh:
                    write_bytes(join(folder, name), fh.read())
    return warnings


def statistics_section(stats: Mapping) -> str:
    """The card's Statistics section, from ``stats.json``'s values."""
    options, vocab, noise = stats["options"], stats["vocabulary"], stats["vocabulary_noise"]
    lengths, strata = stats["lengths"], stats["responses_per_query"]["strata"]
    return "\n".join([
        f"- raw vocabulary: {noise.get('vocabulary_types', 0):,} words; over-long "
        f"(> {options['long_word_length']} chars): {noise.get('over_long_types', 0):,}; "
        f"non-ASCII: {noise.get('non_ascii_types', 0):,}",
        f"- words split into frequent words: {vocab.get('split_words', 0):,}; vocabulary after "
        f"splitting: {vocab.get('vocabulary_after_splitting', 0):,}; kept: {vocab.get('vocabulary_kept', 0):,}",
        f"- length coverage before pruning: queries <= {options['max_query_tokens']} tokens "
        f"{100 * lengths['query_coverage_at_limit']:.2f}%, responses <= {options['max_response_tokens']} "
        f"{100 * lengths['response_coverage_at_limit']:.2f}%",
        f"- published single_turn queries by their number of pairs: "
        f"{ {k: strata[k] for k in ('lt3', '3to5', 'gt5')} }",
        "- plots: `plots/*.png`; full numbers: `stats.json`; rejected records: `rejected/rejected.jsonl`",
    ])


def finish_shard(config, rows):
    """Writer hook: single-turn rows get their ``response_number`` (and stay sorted by id)."""
    from lsdscc.corpus.threads import add_response_numbers

    return add_response_numbers(rows) if config == "single_turn" else rows


def summarize_shard(config, rows):
    """Writer hook: queries by response number in a single-turn shard."""
    if config != "single_turn":
        return None
    per_query = {r.query_id: r.response_number for r in rows}
    return dict(Counter(per_query.values()))


def rejected_jsonl(letters) -> bytes:
    """The dead-letter file: one JSON object a line, sorted by file, line and reason (the
    thread stage's letters, without a file, first). Anything not UTF-8 is escaped."""
    letters = sorted(letters, key=lambda r: (r["file"] or "", r["line"] or 0, r["reason"], r["detail"]))
    text = "".join(json.dumps(r, sort_keys=True, ensure_ascii=False) + "\n" for r in letters)
    return text.encode("utf-8", "backslashreplace")
