"""The rules huggingface_hub and datasets apply to a dataset card offline (issue 21 item 6).

``DatasetCard`` parses the YAML into ``DatasetCardData`` (strict: ``ignore_metadata_errors=False``);
the task categories and size categories are checked against the lists ``datasets`` ships;
``configs`` against ``MetadataConfigs``' data_files rule; the licence against the Hub's
identifiers our cards use (``other`` then needs ``license_name`` and ``license_link``).
"""

from __future__ import annotations

import json
import os

HUB_LICENSES = {"other", "cc-by-nc-sa-4.0"}  # of the Hub's licence identifiers, those our cards use


def check_hub_card(text: str) -> dict:
    """The checks huggingface_hub and datasets apply to a dataset card offline; returns its data."""
    from datasets.utils.metadata import MetadataConfigs
    from datasets.utils.metadata import known_task_ids
    from huggingface_hub import DatasetCard

    card = DatasetCard(text, ignore_metadata_errors=False)
    data = card.data.to_dict()
    with open(os.path.join(os.path.dirname(__import__("datasets").__file__), "utils", "resources",
                           "size_categories.json")) as fh:
        sizes = json.load(fh)
    assert data["license"] in HUB_LICENSES
    if data["license"] == "other":
        assert data["license_name"] and data["license_link"].startswith("https://")
    assert data["language"] == ["en"] and data["pretty_name"]
    assert all(c in known_task_ids for c in data["task_categories"])
    assert all(s in sizes for s in data["size_categories"])
    assert data["source_datasets"] and data["task_ids"]
    configs = MetadataConfigs.from_dataset_card_data(card.data)
    for config in configs.values():
        MetadataConfigs._raise_if_data_files_field_not_valid(config)
    assert "```bibtex" in card.text
    return data
