"""A seeded generator of r/movies-style Reddit dumps, and the bundled sample it made.

The bundled sample (``lsdscc/corpus/sample/RS_sample.jsonl.zst`` + ``RC_sample.jsonl.zst``, the
default input of ``multiref lsdscc build``) is ``write_sample()``'s output: templated
questions and opinions about a fixed list of movies, actors, directors and genres (so many
queries are near-paraphrases, as the test-set stage needs), thread shapes that give queries
with fewer than 3, 3 to 5 and more than 5 responses, plus hand-written hard cases: markdown,
HTML entities, links, e-mails, numbers, emoticons, emoji, elongated words, run-together
slang, non-ASCII words, deleted and removed bodies, AutoModerator and other bots, deep
threads, missing parents, other subreddits, and the dump schema's variants across eras
(``created_utc`` as a string, ``retrieved_on`` / ``retrieved_utc``, ``name`` present or
not, ``_meta``). All usernames are made up.

Regenerate the sample (byte-identical for the same seed)::

    python -m lsdscc.corpus.sample_gen --out lsdscc/corpus/sample

The benchmark uses :func:`write_dump` to make a dump of any size with the same generator.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from typing import Iterator

MOVIES = [
    "Inception", "The Dark Knight", "Interstellar", "Pulp Fiction", "The Godfather", "Parasite",
    "Mad Max: Fury Road", "Blade Runner 2049", "The Matrix", "Alien", "Jaws", "Heat", "Arrival",
    "Whiplash", "Get Out", "Hereditary", "Fargo", "Goodfellas", "Zodiac", "Prisoners", "Sicario",
    "Drive", "Her", "Up", "Coco", "Toy Story", "The Shining", "Memento", "Oldboy", "Alien 3",
]
ACTORS = [
    "Leonardo DiCaprio", "Christian Bale", "Heath Ledger", "Matthew McConaughey", "Uma Thurman",
    "Al Pacino", "Tom Hardy", "Charlize Theron", "Ryan Gosling", "Keanu Reeves", "Sigourney Weaver",
    "Robert De Niro", "Amy Adams", "Miles Teller", "Toni Collette", "Frances McDormand",
    "Jake Gyllenhaal", "Emily Blunt", "Joaquin Phoenix", "Jack Nicholson",
]
DIRECTORS = [
    "Christopher Nolan", "Quentin Tarantino", "Francis Ford Coppola", "Bong Joon-ho", "George Miller",
    "Denis Villeneuve", "Ridley Scott", "Steven Spielberg", "Michael Mann", "Damien Chazelle",
    "Jordan Peele", "Ari Aster", "the Coen brothers", "Martin Scorsese", "David Fincher",
]
GENRES = ["horror", "sci-fi", "comedy", "thriller", "drama", "animated", "action", "crime", "war", "romance"]
DECADES = ["80s", "90s", "2000s", "2010s"]
ASPECTS = ["ending", "soundtrack", "cinematography", "pacing", "dialogue", "score", "plot twist", "opening scene"]

SUBMISSION_TITLES = [
    "What did you think of {movie}?",
    "What do you think of {movie}?",
    "What did you guys think of {movie}?",
    "What are your thoughts on {movie}?",
    "Just watched {movie} for the first time",
    "Just saw {movie} for the first time last night",
    "Is {movie} the best {genre} movie ever made?",
    "Is {movie} the greatest {genre} film of all time?",
    "{actor} was amazing in {movie}",
    "{actor} is so underrated in {movie}",
    "What is the best {genre} movie of the {decade}?",
    "Best {genre} movies of the {decade}?",
    "Official Discussion: {movie} [SPOILERS]",
    "Recommend me a {genre} movie like {movie}",
    "Can someone recommend a {genre} movie similar to {movie}?",
    "{director} is the best director working today",
    "The {aspect} of {movie} is perfect",
]
SELFTEXTS = [
    "",
    "",
    "",
    "I finally watched it yesterday and I can't stop thinking about the {aspect}.",
    "Title says it all. {opinion}",
    "Rewatched it last weekend. {opinion} What do you all think?",
]
OPINIONS = [
    "I loved it, {actor} was incredible.",
    "I loved it, {actor} was amazing.",
    "Honestly {movie} is overrated.",
    "Honestly I think {movie} is a bit overrated.",
    "The {aspect} of {movie} was perfect.",
    "The {aspect} was so good.",
    "It's one of my favorite {genre} movies.",
    "It is one of my favorite {genre} movies ever.",
    "I think {movie2} is better.",
    "I think {movie2} is way better though.",
    "You should watch {movie2} next.",
    "If you liked it you should watch {movie2} next.",
    "{director} never misses.",
    "Saw it in theaters twice, still holds up.",
    "I didn't like it, the pacing was too slow.",
    "I didn't like it at all, the {aspect} was too slow.",
    "The cinematography was stunning.",
    "{actor} deserved an Oscar for this.",
    "{actor} should have won the Oscar for this.",
    "Best {genre} movie of the {decade} for sure.",
    "I love this movie so much.",
    "This movie is amazing.",
]
QUESTIONS = [
    "Has anyone else noticed the {aspect} of {movie}?",
    "Did anyone else think {movie} was too long?",
    "Did anyone else feel that {movie} was too long?",
    "Is {movie2} worth watching?",
    "Is {movie2} worth a watch?",
    "What did you think of the {aspect}?",
    "What did you think about the {aspect}?",
    "Was {actor} better in this or in {movie2}?",
]
REPLIES = [
    "Agreed, {actor} was great.",
    "I completely agree.",
    "Totally agree with you.",
    "Nah, {movie2} is way better.",
    "Yes! The {aspect} was perfect.",
    "I disagree, the {aspect} was fine.",
    "Same here, I watched it {n} times.",
    "Thanks, I'll check it out.",
    "Thanks, I will check it out tonight.",
    "This.",
    "So true.",
    "Exactly what I was thinking.",
    "No way, {movie} is much better than {movie2}.",
    "{movie2} is definitely worth watching.",
    "It's worth watching just for {actor}.",
    "I thought it was too long too.",
    "The {aspect} still gives me chills.",
    "Good point, I never thought about that.",
    "Best movie ever.",
    "I love you for saying this.",
]
ARGUMENT = [
    "You're wrong about {movie2}.",
    "How am I wrong? The {aspect} was terrible.",
    "It wasn't terrible, you just didn't get it.",
    "I got it, it just wasn't good.",
    "Agree to disagree then.",
    "Fine, but {actor} was still great.",
    "That we can agree on.",
]
HARD_CASES = [
    "**Best** movie of the year. [Trailer](https://www.youtube.com/watch?v=YoHD9XEInc0) if you haven't seen it.",
    "&gt; The ending was ambiguous\n\nNo it wasn't, the top falls &amp; you know it.",
    "Check https://www.imdb.com/title/tt1375666/ for the full cast.",
    "Email me at movie.fan@example.com and I'll send you my list :)",
    "I give it 9/10, saw it 3 times in 2010 and paid $12.50 each time.",
    "This movie made me so sad :( but the ending was great :D",
    "That twist 😂😂 I can't ❤️",
    "sooooo goooood, I loved it hahahahaha",
    "iloveyou {actor}, thismovieisamazing",
    "bestmovieever honestly, nooooo way anything beats it",
    "Amélie is my favorite, so naïve and charming. 千と千尋の神隠し too.",
    "# My ranking\n\n1. {movie}\n2. {movie2}\n3. Alien\n\n---\n\n*Edit:* forgot Heat",
    "| movie | score |\n|---|---|\n| {movie} | 9 |\n| {movie2} | 7 |",
    "`spoiler`: >!the top keeps spinning!<",
    "~~Overrated~~ Actually it's great ¯\\\\_(ツ)_/¯",
    "Loooove it &lt;3 &lt;3",
    "RemindMe! 2 days",
    "Watch it at 4K on r/4kbluray, it's ~~fine~~ gorgeous ;)",
    "lol",
    "<b>HTML</b> in a comment? That's <i>weird</i>.",
    "wtfff was that ending lmaooo xD",
    "supercalifragilisticexpialidocious is the only word for it, #bestmovieever",
    "Ｆｕｌｌｗｉｄｔｈ letters and café crème, très bien",
    "千と千尋の神隠し！",
    "Okay so hear me out. I know everyone loves {movie} and I get it, the {aspect} is great and "
    "{actor} gives a career best performance, but the second half drags, the side characters have "
    "nothing to do, the score is way too loud in every scene, and the final twist was obvious from "
    "the first ten minutes if you paid any attention to the dialogue at all. Still a good movie, "
    "just not the masterpiece people say it is.",
    "[deleted]",
    "[removed]",
]
AUTOMOD = (
    "Hello! Your submission has been flaired. Please read the [rules](https://www.reddit.com/r/movies/wiki/rules) "
    "before commenting.\n\n*I am a bot, and this action was performed automatically. Please "
    "[contact the moderators of this subreddit](/message/compose/?to=/r/movies) if you have any questions or concerns.*"
)
REMINDME = "I will be messaging you in 2 days on [**2019-03-10 12:00:00 UTC**](http://www.wolframalpha.com/input/?i=2019-03-10) to remind you of [**this link**](https://www.reddit.com/r/movies/comments/)"

_B36 = "0123456789abcdefghijklmnopqrstuvwxyz"


def base36(n: int) -> str:
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = _B36[r] + out
        if n == 0:
            return out


class _Gen:
    """Draws threads with one seeded ``random.Random``."""

    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.next_submission = 36**5
        self.next_comment = 36**6
        self.time = 1_400_000_000

    def fill(self, template: str) -> str:
        r = self.rng
        movie, movie2 = r.sample(MOVIES, 2)
        return template.format(
            movie=movie, movie2=movie2, actor=r.choice(ACTORS), director=r.choice(DIRECTORS),
            genre=r.choice(GENRES), decade=r.choice(DECADES), aspect=r.choice(ASPECTS),
            n=r.randint(2, 12), opinion=self.fill(r.choice(OPINIONS)) if "{opinion}" in template else "",
        )

    def user(self) -> str:
        return f"user{self.rng.randrange(20000)}"

    def schema(self, record: dict, kind: str) -> dict:
        """Dress a core record in one era's schema variant."""
        r = self.rng
        era = r.choice(("2014", "2019", "2021", "2024"))
        created = record["created_utc"]
        if era == "2014":
            record["created_utc"] = str(created)
            record["name"] = f"{kind}_{record['id']}"
            record["retrieved_on"] = created + 86400 * 30
            record.update(score_hidden=False, ups=record["score"], downs=0, archived=False)
        elif era == "2019":
            record["retrieved_on"] = created + 3600
            record["author_fullname"] = f"t2_{base36(r.randrange(36**6))}"
            record["permalink"] = f"/r/{record['subreddit']}/comments/{record['id']}/"
        elif era == "2021":
            record["retrieved_utc"] = created + 600
            record["name"] = f"{kind}_{record['id']}"
        else:
            record["name"] = f"{kind}_{record['id']}"
            record["retrieved_on"] = created + 60
            record["_meta"] = {"retrieved_2nd_on": created + 129600, "was_deleted_later": False}
            record = dict(sorted(record.items()))
        return record

    def submission(self, subreddit: str = "movies") -> dict:
        r = self.rng
        sid = base36(self.next_submission)
        self.next_submission += r.randint(1, 40)
        self.time += r.randint(600, 7200)
        selftext = self.fill(r.choice(SELFTEXTS))
        if r.random() < 0.04:  # a long post: its top-level comments' query is over 100 tokens
            selftext = "\n\n".join(self.fill(r.choice(OPINIONS + QUESTIONS)) for _ in range(14))
        if r.random() < 0.02:
            selftext = r.choice(("[deleted]", "[removed]"))
        record = {
            "id": sid, "title": self.fill(r.choice(SUBMISSION_TITLES)), "selftext": selftext,
            "author": "AutoModerator" if r.random() < 0.05 else self.user(), "subreddit": subreddit,
            "subreddit_id": "t5_2qh3s" if subreddit == "movies" else "t5_2qh6e",
            "created_utc": self.time, "score": r.randint(0, 5000), "num_comments": 0,
            "is_self": bool(selftext), "over_18": False, "stickied": False, "distinguished": None,
            "link_flair_text": r.choice((None, "Discussion", "Recommendation", "Review")), "edited": False,
            "url": f"https://www.reddit.com/r/{subreddit}/comments/{sid}/",
        }
        return self.schema(record, "t3")

    def comment(self, link: str, parent: str, body: str, subreddit: str = "movies", author: str | None = None) -> dict:
        r = self.rng
        cid = base36(self.next_comment)
        self.next_comment += r.randint(1, 30)
        self.time += r.randint(5, 120)
        if author is None:
            author = self.user()
            if r.random() < 0.03:
                body, author = "[deleted]", "[deleted]"
            elif r.random() < 0.02:
                body = "[removed]"
        record = {
            "id": cid, "body": body, "author": author, "parent_id": parent, "link_id": f"t3_{link}",
            "subreddit": subreddit, "subreddit_id": "t5_2qh3s" if subreddit == "movies" else "t5_2qh6e",
            "created_utc": self.time, "score": r.randint(-20, 900), "controversiality": int(r.random() < 0.05),
            "gilded": 0, "edited": False, "distinguished": "moderator" if author == "AutoModerator" else None,
        }
        return self.schema(record, "t1")

    def reply_count(self) -> int:
        x = self.rng.random()
        if x < 0.40:
            return 0
        if x < 0.65:
            return self.rng.randint(1, 2)
        if x < 0.85:
            return self.rng.randint(3, 5)
        return self.rng.randint(6, 12)

    def thread(self, hard_cases: list[str] = (), subreddit: str = "movies") -> tuple[dict, list[dict]]:
        """One submission and its comment tree."""
        r = self.rng
        sub = self.submission(subreddit)
        sid = sub["id"]
        comments: list[dict] = []

        def add(parent: str, body: str, author=None) -> str:
            c = self.comment(sid, parent, body, subreddit, author)
            comments.append(c)
            return "t1_" + c["id"]

        if r.random() < 0.3:
            add("t3_" + sid, AUTOMOD, "AutoModerator")
        for case in hard_cases:
            top = add("t3_" + sid, self.fill(case), "[deleted]" if case == "[deleted]" else self.user())
            if case.startswith("RemindMe"):
                add(top, REMINDME, "RemindMeBot")
            for _ in range(r.randint(0, 3)):
                add(top, self.fill(r.choice(REPLIES)))
        for _ in range(r.randint(3, 14)):
            top = add("t3_" + sid, self.fill(r.choice(OPINIONS + QUESTIONS)))
            for _ in range(self.reply_count()):
                reply = add(top, self.fill(r.choice(REPLIES)))
                if r.random() < 0.15:
                    for _ in range(r.randint(1, 2)):
                        add(reply, self.fill(r.choice(REPLIES + OPINIONS)))
        if r.random() < 0.1:  # a deep back-and-forth
            parent = "t3_" + sid
            for i in range(r.randint(8, 15)):
                parent = add(parent, self.fill(ARGUMENT[i % len(ARGUMENT)]))
        if r.random() < 0.05:  # a reply whose parent is not in the dump
            add(f"t1_{base36(r.randrange(36**6, 36**7))}", self.fill(r.choice(REPLIES)))
        return sub, comments


def generate(num_threads: int = 250, seed: int = 13, hard_cases: bool = True) -> tuple[list, list]:
    """``num_threads`` r/movies threads (+ a few of another subreddit): (submissions, comments)."""
    gen = _Gen(seed)
    submissions, comments = [], []
    cases = list(HARD_CASES) if hard_cases else []
    for index in range(num_threads):
        mine = cases[index::num_threads] if index < len(cases) else []
        subreddit = "television" if index % 50 == 49 else "movies"
        sub, coms = gen.thread(mine if subreddit == "movies" else [], subreddit)
        submissions.append(sub)
        comments += coms
    return submissions, comments


def iter_threads(num_comments: int, seed: int = 13) -> Iterator[tuple[dict, list]]:
    """Threads until ``num_comments`` comments were made (for benchmarks)."""
    gen = _Gen(seed)
    made = 0
    index = 0
    while made < num_comments:
        index += 1
        sub, coms = gen.thread(HARD_CASES[index % len(HARD_CASES):][:1] if index % 7 == 0 else [])
        coms = coms[: num_comments - made]
        made += len(coms)
        yield sub, coms


def _dumps(record: dict) -> bytes:
    return (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


def write_dump(folder: str, num_comments: int, seed: int = 13, level: int = 3, files: int = 1) -> tuple[list, int]:
    """Write RS/RC dump files (zstd) with ``num_comments`` comments; return (paths, submissions)."""
    import zstandard

    os.makedirs(folder, exist_ok=True)
    cctx = zstandard.ZstdCompressor(level=level)
    rs_path = os.path.join(folder, "RS_bench.jsonl.zst")
    rc_paths = [os.path.join(folder, f"RC_bench_{i:02d}.jsonl.zst") for i in range(files)]
    submissions = 0
    with open(rs_path, "wb") as rs_raw:
        rs = cctx.stream_writer(rs_raw)
        rc_raws = [open(p, "wb") for p in rc_paths]
        rcs = [zstandard.ZstdCompressor(level=level).stream_writer(f) for f in rc_raws]
        for i, (sub, coms) in enumerate(iter_threads(num_comments, seed)):
            rs.write(_dumps(sub))
            submissions += 1
            out = rcs[i % files]
            for c in coms:
                out.write(_dumps(c))
        for w in rcs:
            w.flush(zstandard.FLUSH_FRAME)
        for f in rc_raws:
            f.close()
        rs.flush(zstandard.FLUSH_FRAME)
    return [rs_path] + rc_paths, submissions


def write_arctic(folder: str, submissions, comments, row_group_size: int = 100_000) -> list[str]:
    """Write records as the Parquet mirror ``open-index/arctic`` lays them out: one column per
    dump field (a field missing from a record is null), ``data/submissions/YYYY/MM/000.parquet``
    and ``data/comments/YYYY/MM/000.parquet`` by month of ``created_utc`` (an int64 column: a
    string time of an old era becomes its number, as a typed mirror stores it). Rows keep their
    order. Returns the paths written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    paths = []
    for kind, records in (("submissions", submissions), ("comments", comments)):
        months: dict = {}
        for record in records:
            row = dict(record, created_utc=int(float(record["created_utc"])))
            months.setdefault(time.strftime("%Y/%m", time.gmtime(row["created_utc"])), []).append(row)
        for month, rows in sorted(months.items()):
            path = os.path.join(folder, "data", kind, month, "000.parquet")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            names = list(dict.fromkeys(key for row in rows for key in row))
            table = pa.table({name: [row.get(name) for row in rows] for name in names})
            pq.write_table(table, path, row_group_size=row_group_size)
            paths.append(path)
    return paths


def write_sample(folder: str, num_threads: int = 250, seed: int = 13) -> list[str]:
    """Write the bundled sample: RS_sample.jsonl.zst and RC_sample.jsonl.zst (level 19)."""
    import zstandard

    submissions, comments = generate(num_threads, seed)
    os.makedirs(folder, exist_ok=True)
    paths = []
    for name, records in (("RS_sample.jsonl.zst", submissions), ("RC_sample.jsonl.zst", comments)):
        data = b"".join(_dumps(r) for r in records)
        path = os.path.join(folder, name)
        with open(path, "wb") as fh:
            fh.write(zstandard.ZstdCompressor(level=19).compress(data))
        paths.append(path)
    return paths


def main(argv=None) -> int:
    """``python -m lsdscc.corpus.sample_gen [--out DIR] [--threads N] [--seed S]``."""
    parser = argparse.ArgumentParser(description="Write the bundled r/movies-style sample dump.")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "sample"))
    parser.add_argument("--threads", type=int, default=250)
    parser.add_argument("--seed", type=int, default=13)
    out, threads, seed = (vars(parser.parse_args(argv))[k] for k in ("out", "threads", "seed"))
    for path in write_sample(out, threads, seed):
        print(path, os.path.getsize(path), "bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
