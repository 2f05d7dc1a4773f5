"""multiref.output.hfdata.features_yaml writes the card's feature list without importing
``datasets`` for the types the project's datasets use; it must give what ``datasets`` gives."""

from __future__ import annotations

import pyarrow as pa
import pytest
from datasets import Features

from dailydialog_pp import schema as ddpp
from lsdscc.corpus import outputs
from multiref.output import hfdata

TYPES = [pa.string(), pa.int64(), pa.int32(), pa.float64(), pa.float32(), pa.bool_(), pa.list_(pa.string()),
         pa.list_(pa.int64()), pa.list_(pa.float64()), pa.struct([("x", pa.string()), ("y", pa.list_(pa.float64()))]),
         pa.list_(pa.struct([("x", pa.string()), ("y", pa.float64())])), pa.struct([("s", pa.struct([("t", pa.int64())]))]),
         # left to datasets:
         pa.list_(pa.list_(pa.string())), pa.large_string(), pa.int8(), pa.timestamp("s"),
         pa.dictionary(pa.int32(), pa.string()), pa.large_list(pa.string()), pa.list_(pa.string(), 3)]


def _datasets(schema) -> list:
    return Features.from_arrow_schema(schema)._to_yaml_list()


@pytest.mark.parametrize("arrow_type", TYPES, ids=str)
def test_each_type(arrow_type):
    schema = pa.schema([("a", pa.string()), ("field", arrow_type)])
    assert hfdata.features_yaml(schema) == _datasets(schema)


def test_the_projects_schemas():
    schemas = [outputs.schema(c) for c in outputs.CONFIGS]
    schemas += [ddpp.schema(c) for c in (ddpp.MULTIREF, ddpp.DDPP, ddpp.CORRUPTED, ddpp.CONTEXTS)]
    for schema in schemas:
        assert hfdata.features_yaml(schema) == _datasets(schema)


def test_feature_metadata_goes_to_datasets():
    schema = Features({"label": __import__("datasets").ClassLabel(names=["a", "b"])}).arrow_schema
    assert hfdata.features_yaml(schema) == _datasets(schema)
    assert _datasets(schema)[0].get("dtype") != "int64"  # (the metadata changes what the card says)
