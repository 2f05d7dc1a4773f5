"""Seeded Reddit-like comment bodies, for the benchmarks and the tests.

:class:`RealisticText` draws bodies shaped like real r/movies comments (``bench_corpus.py
--text realistic``, the cleaning's speed tests); :func:`generate_comments` mixes the sample
generator's bodies with :data:`FRAGMENTS` that exercise every cleaning rule (``bench_cleaning.py``).

The benchmark's own bodies (``--text benchmark``) are the sample generator's short templated
sentences. Real r/movies comments are longer and messier, and cleaning them costs more, so
this generator draws bodies shaped like the real ones:

- length: a lognormal word count with a median of 30 words (sigma 1.05: a quarter of the
  bodies under 15 words, one in twenty over 170), cut at 10,000 characters (Reddit's limit);
- words: a Zipf-distributed vocabulary of about 20,000 types (common English words with
  contractions first, then movie names and made-up words), sentences of 3 to 24 words,
  paragraphs of 1 to 5 sentences on longer bodies;
- markup as Pushshift stores it: ``&gt;`` quote lines, ``**bold**``, ``*italic*``, ``_italic_``,
  ``~~strike~~``, ``>!spoilers!<``, `` `code` ``, ``^superscript``, bullet and numbered lists,
  occasional headings and ``Edit:`` lines, ``&amp;`` and ``&lt;3``;
- links (bare urls and ``[text](url)``), ``r/`` and ``u/`` mentions, an occasional e-mail
  address, numbers (years, scores, prices, times), emoji and other non-ASCII text, emoticons,
  quoted speech (JSON-escaped ``"``), elongated words and laughter.

Same seed, same bodies, byte for byte (only ``random.Random`` draws, no hashing of sets).
"""

from __future__ import annotations

import itertools
import random

COMMON = (
    "the I to a and it of that is you was in this but for it's movie just like not on be so I'm have "
    "with they was what don't he one all are about at film if think really as good do would or can "
    "my me people because an time there his more they're out see was get first also know at much "
    "even only when great some was been watched she who than how your could no I've didn't then "
    "story way other him made character thing never well still seen love make why were going "
    "doesn't can't lot her characters better thought best actually pretty back scene which "
    "watch end ever got those movies say any something go into too being bad though many feel "
    "them did after i'd isn't wasn't we by yeah sure should right two same their these where "
    "show over every probably little while because point always years before our series "
    "everyone anything ending part kind things literally plot most agree guy whole since "
    "remember already I'll you're that's there's won't couldn't wouldn't shouldn't he's she's "
    "we're they've let's what's who's here's lol honestly definitely maybe seems trailer "
    "director actor actress role performance cast scenes sequel original book version theater "
    "cinema watching rewatch favorite favourite amazing awful boring funny scary sad beautiful "
    "perfect terrible underrated overrated masterpiece classic"
).split()
SYLLABLES = (
    "ba be bi bo bu ka ke ki ko ku ta te ti to tu ma me mi mo mu na ne ni no nu ra re ri ro ru "
    "la le li lo lu sa se si so su da de di do du ga ge go pa pe pi po fa fe fi fo va ve vo "
    "ha he hi ho za zo cha che cho sha she shi tra tre tri pro pre bra bre cla cle ster ston "
    "ing er an en in on ar or al el il ol ness ment tion ly ful less able ish"
).split()
NAMES = (
    "Nolan Tarantino Kubrick Scorsese Spielberg Fincher Villeneuve DiCaprio Bale Ledger Joker Batman "
    "Marvel DC Disney Pixar Netflix HBO Oscars Cannes Hollywood Star Wars Avengers Endgame Thanos "
    "Gandalf Frodo Skywalker Vader Ripley Bond Tarkovsky Kurosawa Miyazaki Ghibli Lynch Aster A24 "
    "IMAX Blu-ray Rotten Tomatoes Letterboxd IMDb"
).split()
URLS = (
    "https://www.youtube.com/watch?v={id}", "https://youtu.be/{id}", "https://i.imgur.com/{id}.jpg",
    "https://en.wikipedia.org/wiki/{word}_(film)", "http://www.imdb.com/title/tt{num}/",
    "https://www.reddit.com/r/movies/comments/{id}/{word}_{word}/", "https://www.rottentomatoes.com/m/{word}",
    "www.boxofficemojo.com/release/rl{num}/", "https://letterboxd.com/film/{word}-{word}/",
    "https://variety.com/2019/film/news/{word}-{word}-{num}/", "np.reddit.com/r/{sub}/wiki/index",
)
SUBS = ("movies", "MovieSuggestions", "TrueFilm", "horror", "marvelstudios", "StarWars", "television",
        "AskReddit", "moviescirclejerk", "boxoffice", "criterion", "flicks", "4kbluray", "Letterboxd")
UNICODE = ("😂", "❤️", "👍", "🤔", "😭", "🔥", "💀", "🙄", "…", "—", "“best”", "café", "Amélie", "naïve",
           "Léon", "Pokémon", "½", "°", "€20", "£10", "千と千尋", "Ｗｏｗ", "ツ", "¯\\\\_(ツ)_/¯", "→", "™")
EMOTICONS = (":)", ":(", ":D", ";)", ":P", "xD", ":/", "<3", "&lt;3", ":-)", "^_^", "D:")
NUMBERS = ("{y}", "{y}", "{d}/10", "${d}.{c}", "{d}%", "{dd}s", "{d}th", "{d},000", "{d}:{c}", "{d}.{c}",
           "{d}", "{d}", "#{d}", "{d}k", "{d}-{d}", "1st", "2nd", "3rd", "{d}x", "{d}pm")
LAUGHS = ("lol", "lmao", "haha", "hahaha", "lmaooo", "soooo", "reeeally", "nooooo", "yesss", "ahahah", "lolol",
          "!!!", "!!!!!", "???", "?!", "...", "....")
OPENERS = ("&gt; ", "&gt;", "> ", "&gt; &gt; ")
EDITS = ("Edit: ", "EDIT: ", "Edit - ", "**Edit:** ", "ETA: ", "Edit 2: ")
MAIL_DOMAINS = ("gmail.com", "yahoo.com", "example.org")
END_MARKS = ". . . . . . . ? ? ! ... ! .".split(" ")


def _lexicon(rng: random.Random, size: int = 20_000, slots: int = 1 << 19) -> tuple[list, list]:
    """(words by rank, a draw table): common words first, then names and made-up words.

    The table holds each word in proportion to its Zipf weight, so a uniform index into it
    draws a word (faster than ``random.choices`` with weights, which bisects per draw).
    """
    words = list(COMMON) + list(NAMES)
    seen = set(words)
    while len(words) < size:
        word = "".join(rng.choice(SYLLABLES) for _ in range(rng.choice((1, 2, 2, 2, 3, 3, 4))))
        if rng.random() < 0.05:
            word = word.capitalize()
        if word not in seen:
            seen.add(word)
            words.append(word)
    cum = list(itertools.accumulate(1.0 / (rank + 2.0) ** 1.12 for rank in range(len(words))))
    table, rank = [], 0
    for slot in range(slots):
        while cum[rank] < (slot + 0.5) / slots * cum[-1]:
            rank += 1
        table.append(words[rank])
    return words, table


class RealisticText:
    """Draws Reddit-like comment bodies with one seeded ``random.Random``."""

    def __init__(self, seed: int, max_chars: int = 10_000):
        self.rng = random.Random(f"realistic-text-{seed}")
        self.words, self.table = _lexicon(self.rng)
        self.max_chars = max_chars

    def _fill(self, template: str) -> str:
        r = self.rng
        return template.format(
            id=f"{r.getrandbits(44):x}",
            word=r.choice(self.words[200:2000]).lower(), num=r.randrange(10**5, 10**7), sub=r.choice(SUBS),
            y=r.randrange(1920, 2020), d=r.randrange(1, 100), c=r.randrange(10, 100), dd=r.choice((20, 50, 70, 80, 90)),
        )

    def _token(self, words: list, i: int) -> None:
        """Replaces ``words[i]`` with a decorated token (markup, link, mention, number, emoji...)."""
        r, word = self.rng, words[i]
        x = r.random()
        if x < 0.30:
            words[i] = self._fill(r.choice(NUMBERS))
        elif x < 0.50:
            words[i] = r.choice(("**{}**", "*{}*", "_{}_", "***{}***", "~~{}~~", "`{}`", "^{}", '"{}"',
                                 "'{}'", "({})", "&amp;", "{},")).format(word)
        elif x < 0.63:
            words[i] = r.choice(UNICODE)
        elif x < 0.71:
            words[i] = r.choice(EMOTICONS)
        elif x < 0.81:
            words[i] = r.choice(LAUGHS)
        elif x < 0.86:
            url = self._fill(r.choice(URLS))
            words[i] = r.choice((url, url, f"[{word}]({url})", f"[{word} {words[i - 1]}]({url})", f"<{url}>"))
        elif x < 0.895:
            sub = r.choice(SUBS)
            words[i] = r.choice((f"r/{sub}", f"/r/{sub}", f"r/{sub}.", f"[r/{sub}](/r/{sub})"))
        elif x < 0.91:
            words[i] = r.choice(("u/", "/u/")) + r.choice(self.words[300:3000]) + str(r.randrange(1000))
        elif x < 0.913:
            name = f"{r.choice(self.words[100:900]).lower()}.{r.randrange(99)}"
            words[i] = f"{name}@{r.choice(MAIL_DOMAINS)}"
        else:
            words[i] = f'"{word} {" ".join(r.choices(self.words[:300], k=r.randrange(1, 6)))}"'

    def _words(self, n: int) -> list:
        """``n`` words drawn by frequency, about one in 22 decorated (see :meth:`_token`)."""
        rnd, table = self.rng.random, self.table
        size = len(table)
        words = [table[int(rnd() * size)] for _ in range(n)]
        for _ in range(int(n * 0.045 + rnd())):
            self._token(words, int(rnd() * n))
        return words

    def _sentence(self, words: list) -> str:
        r = self.rng
        n = len(words)
        if n > 8 and r.random() < 0.4:
            words[2 + int(r.random() * (n - 3))] += ","
        first = words[0]
        words[0] = first[:1].upper() + first[1:]
        return " ".join(words) + END_MARKS[int(r.random() * len(END_MARKS))]

    def _paragraphs(self, total: int) -> list:
        """Sentences of 3-24 words adding up to ``total`` words, grouped into paragraphs of 2-7."""
        r, paragraphs, current = self.rng, [], []
        words, start = self._words(total), 0
        while start < total:
            n = 3 + int(r.random() * 22)
            current.append(self._sentence(words[start:start + n]))
            start += n
            if len(current) >= 2 + int(r.random() * 6) and start < total:
                paragraphs.append(" ".join(current))
                current = []
        if current:
            paragraphs.append(" ".join(current))
        return paragraphs

    def _block(self, paragraphs: list) -> None:
        """Occasional block markup: a quote, a list, a heading, a spoiler, an edit line."""
        r = self.rng
        x = r.random()
        if x < 0.08:
            paragraphs.insert(0, r.choice(OPENERS) + self._sentence(self._words(r.randrange(4, 20))))
        elif x < 0.11 and len(paragraphs) > 1:
            bullet = r.choice(("* ", "- ", "+ ", "1. "))
            items = [self._sentence(self._words(r.randrange(2, 10))) for _ in range(r.randrange(2, 7))]
            paragraphs.insert(1, "\n".join(
                (f"{k + 1}. " if bullet == "1. " else bullet) + item for k, item in enumerate(items)))
        elif x < 0.115:
            paragraphs.insert(0, r.choice(("# ", "## ", "### ", "**")) + self._sentence(self._words(r.randrange(2, 7))))
        elif x < 0.125:
            paragraphs.append(">!" + self._sentence(self._words(r.randrange(3, 12))) + "!<")
        elif x < 0.14:
            paragraphs.append(r.choice(EDITS) + self._sentence(self._words(r.randrange(3, 15))))
        elif x < 0.142:
            paragraphs.append("| Movie | Score |\n|---|---|\n| " + self._sentence(self._words(2)) + " | 8/10 |")

    def body(self) -> str:
        """One comment body (never empty, at most ``max_chars`` characters)."""
        r = self.rng
        total = max(1, int(r.lognormvariate(3.4012, 1.05)))
        if total <= 3 and r.random() < 0.3:
            return r.choice(("This.", "lol", "Same.", "Agreed.", "Source?", "^ this", "F", "😂😂😂", "Wow",
                             "Thanks!", "Yes.", "No.", "Why?", "Exactly.", "Came here to say this."))
        paragraphs = self._paragraphs(min(total, 2200))
        self._block(paragraphs)
        text = "\n\n".join(paragraphs)
        if len(text) > self.max_chars:
            text = text[: text.rfind(" ", 0, self.max_chars)]
        return text


#: Fragments with what sample_gen's templates lack or have rarely (each rule of the cleaning).
FRAGMENTS = [
    "I can't believe it's 2019 and they're still making these.",
    "Saw it on 3/4/2019 at 9:30pm, paid $12.50 \u2014 worth it!!!",
    'He literally said "I\'ll be back." and left.',
    "Check out [this review](https://www.rottentomatoes.com/m/inception) and/or r/TrueFilm.",
    "**Spoilers:** >!Bruce dies!< ... or does he???",
    "It's the 90s' best 3D movie, 10/10 would watch again :D",
    "Soooo goooood lmaooo hahahaha xD",
    "We're gonna need a bigger boat. Gotta love it ;)",
    "&gt; quoted text\n\nI don't agree tbh :(",
    "1. Alien\n2. Aliens\n3. Alien 3",
    "Edit: typo. Edit 2: thanks for the gold, kind stranger!",
    "The 2nd and 3rd acts drag\u2026 it\u2019s \u201cfine\u201d I guess \U0001F937",
    "u/someone said it's 2h 49m long -- that's ~170 minutes.",
    "`code`? ~~strike~~ ^(tiny) text and a | table | row |",
    "Mr. Nolan's films (e.g. Memento, Inception) are great... aren't they?",
    "mail me at fan.club@example.com or see imdb.com/title/tt0816692/ <3",
    "LOL!!!! I cannot even... wanna see it again tbh \U0001F602\U0001F602",
    "# Ranking\n\n* Heat\n* Drive\n\n---\n\n*Edit:* forgot Zodiac (2007)",
]


def generate_comments(n: int, seed: int = 11) -> list[str]:
    """``n`` Reddit-like comment bodies, the same for the same ``n`` and ``seed``."""
    from lsdscc.corpus.sample_gen import iter_threads

    bodies = [c["body"] for _, coms in iter_threads(max(200, n // 4), seed=seed) for c in coms]
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        parts = [rng.choice(FRAGMENTS) if rng.random() < 0.35 else rng.choice(bodies)
                 for _ in range(rng.randint(1, 6))]
        out.append(rng.choice((" ", "\n\n", " ")).join(parts))
    return out
