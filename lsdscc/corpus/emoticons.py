"""Emoticons and emoji, grouped by the emotion word that replaces them (docs/algorithms.md#corpus-step-3-emoticons).

The table is data: each emotion word maps to the emoticons that become it. Matching is
case-sensitive (``:D`` is laughter, ``:d`` is not an emoticon) and happens only where an
emoticon stands alone (between spaces, or at the start/end of the text, or before
punctuation), so ``9:30`` or ``http://`` are never touched (urls are normalized first).
:func:`substitute_emoticons` does the matching, with one trie-shaped regex for the faces
and one for the emoji.
"""

from __future__ import annotations

import functools
import re

EMOTICONS: dict[str, tuple[str, ...]] = {
    "happy": (":)", ":-)", ":]", ":-]", "=)", "=]", ":o)", ":c)", ":>", ":->", "(:", "(-:", "^_^", "^^", "^.^", ":3", ":-3"),
    "laugh": (":D", ":-D", "=D", "xD", "XD", "x-D", "X-D", "8D", "8-D"),
    "sad": (":(", ":-(", ":[", ":-[", "=(", "=[", ":c", ":-c", ":<", ":-<", "):", ")-:", ":'-(", "D:"),
    "cry": (":'(", ":,(", "T_T", "T.T", ";_;"),
    "wink": (";)", ";-)", ";]", ";-]", ";D", ";-D", "*)", "*-)"),
    "tongue": (":P", ":-P", ":p", ":-p", "=P", "=p", ";P", ";p", "XP", "xP", ":b", ":-b"),
    "surprise": (":O", ":-O", ":o", ":-o", "O_O", "o_O", "O_o", "o_o", "O.O", "o.O", "O.o"),
    "skeptical": (":/", ":-/", ":\\", ":-\\", "=/", "=\\", ":S", ":-S", ">.>", "<.<", "-_-", "-.-"),
    "neutral": (":|", ":-|", "=|"),
    "angry": (">:(", ">:-(", ">:[", "D:<", ">_<", ">:O"),
    "kiss": (":*", ":-*", ":x", ":-x", ":X", ":-X"),
    "love": ("<3", "<33", "<333"),
    "heartbreak": ("</3",),
}

#: Emoji with an obvious emotion word (other emoji are non-ASCII tokens, removed in step 5).
EMOJI: dict[str, tuple[str, ...]] = {
    "happy": ("\U0001F600", "\U0001F603", "\U0001F604", "\U0001F60A", "\U0001F642", "\u263A\uFE0F", "\u263A"),
    "laugh": ("\U0001F602", "\U0001F923", "\U0001F606", "\U0001F601"),
    "sad": ("\U0001F622", "\U0001F61E", "\U0001F641", "\U0001F614", "\u2639\uFE0F", "\u2639"),
    "cry": ("\U0001F62D",),
    "wink": ("\U0001F609",),
    "tongue": ("\U0001F61B", "\U0001F61C", "\U0001F61D"),
    "surprise": ("\U0001F62E", "\U0001F632", "\U0001F631"),
    "angry": ("\U0001F620", "\U0001F621", "\U0001F92C"),
    "love": ("\u2764\uFE0F", "\u2764", "\U0001F60D", "\U0001F495", "\U0001F496", "\U0001F970"),
    "skeptical": ("\U0001F914", "\U0001F928", "\U0001F612", "\U0001F644"),
    "neutral": ("\U0001F610", "\U0001F611"),
    "kiss": ("\U0001F618", "\U0001F617"),
    "shrug": ("\U0001F937", "\U0001F937\u200D\u2642\uFE0F", "\U0001F937\u200D\u2640\uFE0F"),
    "approve": ("\U0001F44D", "\U0001F44C"),
    "disapprove": ("\U0001F44E",),
    "applause": ("\U0001F44F",),
}


#: What may follow a face besides whitespace or the text's end (``great :).``).
FACE_FOLLOWERS = ".,!?;"
#: The shrug's face: a text holding it has the shrug rule (_SHRUG) run first.
SHRUG = "(ツ)"


def emoticon_table() -> dict[str, str]:
    """Every emoticon and emoji mapped to its emotion word (one flat dict)."""
    table: dict[str, str] = {}
    for source in (EMOTICONS, EMOJI):
        for word, faces in source.items():
            for face in faces:
                if face in table and table[face] != word:
                    raise ValueError(f"emoticon {face!r} is in two groups: {table[face]} and {word}")
                table[face] = word
    return table


# --- matching ------------------------------------------------------------------------------
def trie_pattern(words) -> str:
    """One regex matching any of ``words``, longest first, as a trie (``a(?:b(?:c)?)?``).

    Equivalent to the alternation of ``words`` sorted longest first (two words can match at
    one place only if one is a prefix of the other, and the trie tries the longer first),
    but ``re`` rejects a position after one character instead of one try per word.
    """
    root: dict = {}
    for word in words:
        node = root
        for ch in word:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict) -> str:
        alts = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(root)


@functools.lru_cache(maxsize=None)
def _emoticon_regex() -> tuple:
    """(standalone ASCII faces, emoji anywhere, (a class of every character from the lowest first
    character of an emoji up, the set of first characters), replacement)."""
    table = emoticon_table()
    faces = [f for f in table if f.isascii()]
    emoji = [f for f in table if not f.isascii()]
    # A face stands alone: whitespace or the start before it (the lookbehind after its first
    # character, so that re scans for first characters), whitespace, end or punctuation after.
    by_first = {}
    for face in faces:
        by_first.setdefault(face[0], []).append(face[1:])
    alts = [re.escape(ch) + r"(?<!\S.)" + trie_pattern(rests) for ch, rests in sorted(by_first.items())]
    face_regex = re.compile("(?:" + "|".join(alts) + r")(?=\s|$|[" + re.escape(FACE_FOLLOWERS) + "])")
    emoji_regex = re.compile(trie_pattern(emoji) or r"(?!)")
    # re tries the emoji trie at every position (45 branches), and a class of scattered astral
    # characters is as slow: one range scans fast for the few places where an emoji can start.
    firsts = frozenset(e[0] for e in emoji)
    high = re.compile(f"[{min(firsts)}-\U0010ffff]" if firsts else r"(?!)")
    return face_regex, emoji_regex, (high, firsts), lambda m: f" {table[m.group(0)]} "


# The arm before the face is taken only from the start of a run of \ and _ (re tries a later
# start of the run only after the run's start failed), so "___...(ツ)" is not quadratic.
_SHRUG = re.compile(r"¯?(?:(?<![\\_])[\\_]++)?" + re.escape(SHRUG) + r"[\\_]*/?¯?")


def substitute_emoticons(text: str) -> str:
    """Every emoticon (standalone) and emoji (anywhere) replaced by `` word `` (spaces around it).

    Faces first, then emoji, so an emoji's replacement never makes a face stand alone.
    """
    faces, emoji, emoji_starts, word = _emoticon_regex()
    text = substitute_shrug(text)
    text = faces.sub(word, text)
    if not text.isascii():
        text = _emoji_sub(text, emoji, emoji_starts, word)
    return text


def substitute_shrug(text: str) -> str:
    """The first step of :func:`substitute_emoticons`: every shrug (:data:`SHRUG` with its arms)
    replaced by `` shrug ``. Running it twice changes nothing (no shrug is left, and the
    spaces around the word keep one from forming).

    ``_SHRUG.sub(" shrug ", text)``, run on each stretch between spaces that holds the face: a
    shrug holds no space and its lookbehind asks for a \\ or _ only, so a stretch gives what the
    whole text gives there, and re does not try the pattern (no literal first) at every position
    of the text (60 us on an 800-character body, a few on the stretches)."""
    i = text.find(SHRUG)
    if i < 0:
        return text
    out, pos = [], 0
    while i >= 0:
        start = text.rfind(" ", pos, i) + 1 or pos
        end = text.find(" ", i) % (len(text) + 1)  # (-1, no space after: the end)
        out += (text[pos:start], _SHRUG.sub(" shrug ", text[start:end]))
        pos = end
        i = text.find(SHRUG, end)
    out.append(text[pos:])
    return "".join(out)


def _emoji_sub(text: str, emoji: re.Pattern, starts: tuple, word) -> str:
    """``emoji.sub(word, text)``, tried only where an emoji can start: at the characters of
    ``starts[0]`` (every character from the lowest first character up) that are first
    characters (``starts[1]``); leftmost matches, none inside an earlier one, as sub does."""
    high, firsts = starts
    out, pos = [], 0
    for candidate in high.finditer(text):
        at = candidate.start()
        if at < pos or text[at] not in firsts:
            continue
        found = emoji.match(text, at)
        if found:
            out += (text[pos:at], word(found))
            pos = found.end()
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)
