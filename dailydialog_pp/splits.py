"""Train/validation/test assignment by a hash of the dialogue id (docs/algorithms.md#5-dd).

The paper splits DD++ 80/10/10 by context; we split by *dialogue* so that chunks of one
dialogue never land in two splits, and by a hash so reruns and other runners agree.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from multiref.util.options import option, recorded


@dataclass(frozen=True)
class SplitOptions:
    """Split fractions (train, validation, test) and a salt for the hash (recorded in the card)."""

    train: float = option(0.8, flag="--split-fractions", index=0, help="split fractions by dialogue hash")
    validation: float = option(0.1, flag="--split-fractions", index=1, help="split fractions by dialogue hash")
    test: float = option(0.1, flag="--split-fractions", index=2, help="split fractions by dialogue hash")
    salt: str = option("dailydialog_pp", flag="--split-salt", help="salt of the split hash")

    def __post_init__(self):
        for name in ("train", "validation", "test"):
            value = getattr(self, name)
            if not 0 <= value <= 1:
                raise ValueError(f"split fraction {name} must be in [0, 1], got {value}")
        total = self.train + self.validation + self.test
        if abs(total - 1.0) > 1e-9:
            raise ValueError(f"split fractions must sum to 1, got {total:g}")

    def as_dict(self) -> dict:
        return recorded(self)


def hash_fraction(key: str, salt: str = "") -> float:
    """A stable number in [0, 1) from sha256(salt + '\\0' + key)."""
    digest = hashlib.sha256(f"{salt}\0{key}".encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def assign_split(dialogue_id: str, options: SplitOptions = SplitOptions()) -> str:
    """'train', 'validation' or 'test' for ``dialogue_id``; every chunk of it gets the same."""
    x = hash_fraction(dialogue_id, options.salt)
    if x < options.train:
        return "train"
    if x < options.train + options.validation:
        return "validation"
    return "test"
