"""What the C half of the cleaning (``lsdscc/corpus/_cleaning_native.c``) needs to know of a rule,
derived from the rule's Python definition (issue 31): the characters a line rule's match can
start with, and the characters outside ASCII that ``re.I`` matches with an ASCII letter.

The C code holds no copy of a table or a trigger of the Python rules; ``cleaning._load_native``
hands it the tables and these derivations at ``configure()``.
"""

from __future__ import annotations

import re
import re._constants as sre_c
import re._parser as sre_parse
from dataclasses import dataclass, field


@dataclass
class FirstCharacters:
    """The characters a match of a pattern can start with: ``chars``, any decimal digit (``\\d``)
    where ``digits``, anything where ``anything`` (a superset is safe: C then asks the rule)."""

    chars: set = field(default_factory=set)
    digits: bool = False
    anything: bool = False

    def add(self, other: "FirstCharacters") -> None:
        self.chars |= other.chars
        self.digits |= other.digits
        self.anything |= other.anything


def _set_firsts(items, first: FirstCharacters) -> None:
    """The characters of a character set (``IN``): literals, ranges, ``\\d``; anything else, anything."""
    for op, value in items:
        if op is sre_c.LITERAL:
            first.chars.add(chr(value))
        elif op is sre_c.RANGE and value[1] - value[0] < 256:
            first.chars.update(map(chr, range(value[0], value[1] + 1)))
        elif op is sre_c.CATEGORY and value is sre_c.CATEGORY_DIGIT:
            first.digits = True
        else:  # (NEGATE, wide ranges, other categories)
            first.anything = True


def _sequence_firsts(items, first: FirstCharacters) -> bool:
    """Adds the first characters of a sequence of parsed items; True where it can match nothing."""
    for op, value in items:
        if op is sre_c.AT or op in (sre_c.ASSERT, sre_c.ASSERT_NOT):
            continue  # (zero width: a superset of the first characters is kept)
        if op is sre_c.LITERAL:
            first.chars.add(chr(value))
            return False
        if op is sre_c.IN:
            _set_firsts(value, first)
            return False
        if op is sre_c.SUBPATTERN:
            if not _sequence_firsts(value[3], first):
                return False
        elif op is sre_c.BRANCH:
            empty = False
            for branch in value[1]:
                empty |= _sequence_firsts(branch, first)
            if not empty:
                return False
        elif op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, sre_c.POSSESSIVE_REPEAT):
            if not _sequence_firsts(value[2], first) and value[0] > 0:
                return False
        else:  # (any other construct: every character)
            first.anything = True
            return False
    return True


def first_characters(pattern: re.Pattern) -> FirstCharacters:
    """The characters a match of ``pattern`` (a line rule, without re.I) can start with.

    ValueError where it can match the empty string or ignores case (C asks the rule only
    at a line start whose first character is one of these)."""
    if pattern.flags & re.I:
        raise ValueError(f"{pattern.pattern!r}: first characters under re.I are not derived")
    first = FirstCharacters()
    if _sequence_firsts(sre_parse.parse(pattern.pattern, pattern.flags), first):
        raise ValueError(f"{pattern.pattern!r} can match the empty string")
    return first


def re_case_folds() -> dict[str, str]:
    """Characters outside ASCII that ``re.I`` matches with an ASCII letter, each with that letter
    (``\\u0130`` and ``\\u0131`` with ``i``, long s with ``s``, the Kelvin sign with ``k``).

    Searched in the Basic Multilingual Plane (no character above it has a simple case mapping
    into ASCII; tests/test_lsdscc_cleaning_tables.py checks every code point)."""
    text = "".join(map(chr, range(128, 0x10000)))
    return {c: next(a for a in "abcdefghijklmnopqrstuvwxyz" if re.fullmatch(a, c, re.I))
            for c in re.findall("[a-z]", text, re.I)}
