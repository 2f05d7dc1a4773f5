"""Warnings about system outputs that score high or low for the wrong reason: empty and very
short hypotheses under add-one smoothing without a brevity penalty, and hypotheses cased or
tokenized unlike the references (as sacrebleu warns). Each returns text; the caller decides
where it goes (``multiref score`` prints it on standard error)."""

from __future__ import annotations

import operator
import re

#: hypotheses with at most this many tokens are reported as very short
SHORT_TOKENS = 2
#: the casing and tokenization checks look at this many hypotheses and references
STYLE_SAMPLE = 2000


def degenerate_counts(items, tokenize) -> tuple:
    """``(empty, short, total)``: hypotheses with no token, with 1..SHORT_TOKENS tokens, all
    (the tokens counted in C loops: ``map``, ``Counter``)."""
    from collections import Counter

    sizes = Counter(map(len, map(tokenize, (h for item in items for h in item.hypotheses))))
    return sizes[0], sum(sizes[n] for n in range(1, SHORT_TOKENS + 1)), sum(sizes.values())


def degenerate_warning(items, metrics, tokenizer: str, lowercase: bool, explain: bool = True) -> str | None:
    """A warning naming the counts of empty and very short hypotheses and the settings under
    which they score high (add-one smoothing without brevity penalty, the public LSDSCC
    scorer's BLEU: an empty output gets 1.0 against every group); None when there are none."""
    from multiref.metrics.tokenizers import get_tokenizer

    if (tokenizer or "whitespace") == "whitespace":  # the first SHORT_TOKENS + 1 tokens tell: split no further
        tokenize = operator.methodcaller("split", None, SHORT_TOKENS)
    else:
        tokenize = get_tokenizer(tokenizer, bool(lowercase))
    rewarding = [m.name for m in metrics
                 if getattr(m, "smoothing", None) == "add1" and not getattr(m, "brevity_penalty", True)]
    if not rewarding:  # short outputs only matter to add-one smoothing without a brevity penalty
        return None
    empty, short, total = degenerate_counts(items, tokenize)
    if not empty and not short:
        return None
    if not explain:  # a later system of the same run: the explanation is on the first warning
        return f"{empty} of {total} hypotheses are empty and {short} have 1-{SHORT_TOKENS} tokens (see above)."
    return (f"{empty} of {total} hypotheses are empty and {short} have 1-{SHORT_TOKENS} tokens. "
            "Add-one smoothing without a brevity penalty (smooth:add1|bp:no, the public LSDSCC scorer's BLEU and "
            "the maxbleu/mds/pds default) scores an empty hypothesis 1.0 against any references and a one-word "
            f"one 1.0 when its word is in them (0.84 when it is not); here: {', '.join(rewarding)}. Check the "
            "outputs, or compare with --bleu-smoothing nltk1 --brevity-penalty.")


#: a punctuation token or clitic standing alone ("do n't", "word .") / attached to a word ("don't",
#: "word."): ``(^|\s)(P)(\s|$)`` and ``\w(P)(\s|$)`` for ``P`` = ``[.,!?;:]|n't|'s|'m|'re|'ll|'ve|'d``,
#: written so that every match starts with one of ``.,!?;:n'`` and the character before it is checked
#: by a look-behind: the regular expression engine then skips to those characters (about 3x faster
#: on a sample of 2,000 outputs; tests/test_score_inputs.py checks the two forms agree)
_DETACHED = re.compile(r"(?:[.,!?;:](?<!\S.)|n(?<!\Sn)'t|'(?<!\S')(?:s|m|re|ll|ve|d))(?:\s|$)")
_ATTACHED = re.compile(r"(?:[.,!?;:](?<=\w.)|n(?<=\wn)'t|'(?<=\w')(?:s|m|re|ll|ve|d))(?:\s|$)")


def _share(texts, test) -> float:
    return sum(map(bool, map(test, texts))) / len(texts) if texts else 0.0


def style_warnings(items, lowercase: bool, tokenizer: str) -> list:
    """Warnings (as sacrebleu gives) when hypotheses and references look differently cased or
    tokenized: such a mismatch lowers every n-gram metric for no fault of the system."""
    from itertools import islice

    hyps = list(islice((h for item in items for h in item.hypotheses if h.strip()), STYLE_SAMPLE))
    refs = list(islice((r for item in items for r in item.references if r.strip()), STYLE_SAMPLE))
    if not hyps or not refs:
        return []
    out = []
    if not lowercase:
        cased_h, cased_r = (_share(t, lambda s: s != s.lower()) for t in (hyps, refs))
        if cased_r < 0.01 and cased_h > 0.2:
            out.append(f"the references look lowercased but {cased_h:.0%} of the hypotheses have capitals; "
                       "lowercase the hypotheses or pass --lowercase")
        elif cased_h < 0.01 and cased_r > 0.2:
            out.append(f"the hypotheses look lowercased but {cased_r:.0%} of the references have capitals; "
                       "pass --lowercase")
    if tokenizer == "whitespace":
        det_h, det_r = (_share(t, _DETACHED.search) for t in (hyps, refs))
        att_h, att_r = (_share(t, _ATTACHED.search) for t in (hyps, refs))
        if det_r > 0.3 and att_r < 0.05 and att_h > 0.2:
            out.append(f"the references look tokenized (\"do n't\", \"word .\") but {att_h:.0%} of the hypotheses "
                       "have punctuation attached to words; tokenize them the same way or pass --tokenizer treebank")
        elif det_h > 0.3 and att_h < 0.05 and att_r > 0.2:
            out.append(f"the hypotheses look tokenized but {att_r:.0%} of the references have punctuation attached "
                       "to words; pass --tokenizer treebank or tokenize both the same way")
    return out
