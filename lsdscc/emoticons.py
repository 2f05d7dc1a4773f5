"""Emoticons and emoji, grouped by the emotion word that replaces them (ALGORITHMS.md s.1, step 3).

The table is data: each emotion word maps to the emoticons that become it. Matching is
case-sensitive (``:D`` is laughter, ``:d`` is not an emoticon) and happens only where an
emoticon stands alone (between spaces, or at the start/end of the text, or before
punctuation), so ``9:30`` or ``http://`` are never touched (urls are normalized first).
"""

from __future__ import annotations

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
