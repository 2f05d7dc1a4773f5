"""Arrow schemas of the configs written by pipelines/dailydialog/job.py (docs/dailydialog.md#columns)."""

from __future__ import annotations

MULTIREF = "multiref"
DDPP = "dailydialog_pp"
CORRUPTED = "dailydialog_pp_corrupted"
CONTEXTS = "contexts"


def schema(config: str):
    """The pyarrow schema of ``config`` (pyarrow imported here, not at module import)."""
    import pyarrow as pa

    strings = pa.list_(pa.string())
    if config == MULTIREF:
        return pa.schema([("id", pa.string()), ("dialogue_id", pa.string()), ("context", strings),
                          ("references", strings)])
    if config == DDPP:
        return pa.schema([("id", pa.string()), ("dialogue_id", pa.string()), ("context", strings),
                          ("positive_responses", strings), ("adversarial_negative_responses", strings),
                          ("random_negative_responses", strings), ("source", pa.string())])
    if config == CORRUPTED:
        return pa.schema([("id", pa.string()), ("dialogue_id", pa.string()), ("context", strings),
                          ("corruption", pa.string()), ("positive_responses", strings),
                          ("corrupted_responses", strings)])
    if config == CONTEXTS:
        return pa.schema([("id", pa.string()), ("context", strings), ("response", pa.string())])
    raise ValueError(f"unknown config {config!r}")
