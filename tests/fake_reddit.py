"""A fake Reddit HTTP server for crawler tests, speaking the wire format praw 8 / prawcore 4 use.

It binds 127.0.0.1 on an ephemeral port and serves, from an in-memory fixture of threads:

- ``POST /api/v1/access_token`` (client-credentials grant, HTTP basic auth), as
  ``prawcore.auth.Authorizer._request_token`` expects:
  ``{"access_token", "token_type", "expires_in", "scope"}``; wrong credentials get 401.
- ``GET /r/{sub}/{hot|new|top|controversial|rising}`` with ``limit``, ``after``, ``t``:
  a ``Listing`` of ``t3`` things, paged with ``after`` (praw's ``ListingGenerator``).
- ``GET /comments/{id}/`` with ``limit``, ``sort``: the two-element array
  ``[submission Listing, comment Listing]``; comments carry nested ``replies`` Listings
  (or ``""``); siblings past the page budget become a ``more`` thing whose ``children`` are
  their ids, and replies deeper than ``max_depth`` become a "continue this thread" ``more``
  (``id "_"``, ``count 0``, no children), as on reddit.com.
- ``GET /comments/{id}/_/{comment_id}``: the "continue this thread" page praw's
  ``MoreComments._load_comment`` requests (one comment, with its replies).
- ``POST /api/morechildren/`` (form ``link_id``, ``children``, ``sort``, ``api_type=json``):
  ``{"json": {"errors": [], "data": {"things": [...]}}}``, a flat depth-first list whose
  comments have ``replies: ""``; more ids than ``more_batch`` leave a new ``more`` thing.
- ``GET /api/info/?id=t3_...``: a Listing of the named submissions.

Every API response carries ``x-ratelimit-remaining/used/reset`` headers (defaults chosen so
prawcore's limiter does not sleep). Faults can be injected (``fail``: a status such as 429
or 500 for the Nth matching request, or a dropped connection), and every request is recorded
(``requests``, ``thread_requests``) so tests can check what was (re)fetched.

Shapes were read from praw/models/reddit/{submission,more,comment}.py,
praw/models/comment_forest.py, praw/objector.py, praw/models/listing/generator.py and
prawcore/{auth,sessions,rate_limit}.py of the installed versions.
"""

from __future__ import annotations

import base64
import copy
import json
import random
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

MOVIES_ID = "t5_2qh3s"
CLIENT_ID = "fake-client-id"
CLIENT_SECRET = "fake-client-secret-do-not-log-7f3a"  # tests assert this never appears in outputs
ACCESS_TOKEN = "fake-access-token-9c1e"  # nor this
LISTINGS = ("hot", "new", "top", "controversial", "rising")


# ----------------------------------------------------------------------------- fixture


def _b36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        number, rem = divmod(number, 36)
        out = digits[rem] + out
        if number == 0:
            return out


def _submission(sid: str, created: float, title: str, *, selftext: str = "", author: str | None = "op_user",
                score: int = 10, **extra) -> dict:
    data = {
        "id": sid, "name": f"t3_{sid}", "title": title, "selftext": selftext,
        "author": author if author is not None else "[deleted]",
        "created_utc": created, "created": created, "subreddit": "movies", "subreddit_id": MOVIES_ID,
        "subreddit_name_prefixed": "r/movies", "subreddit_type": "public", "score": score, "ups": score,
        "downs": 0, "upvote_ratio": 0.93, "num_comments": 0,
        "permalink": f"/r/movies/comments/{sid}/{re.sub(r'[^a-z0-9]+', '_', title.lower()).strip('_')[:40]}/",
        "url": f"https://www.reddit.com/r/movies/comments/{sid}/" if selftext else f"https://example.com/{sid}",
        "is_self": bool(selftext), "over_18": False, "stickied": False, "distinguished": None,
        "link_flair_text": None, "edited": False, "locked": False, "archived": False, "spoiler": False,
        "domain": "self.movies" if selftext else "example.com", "thumbnail": "self", "gilded": 0,
        "selftext_html": None, "media": None, "is_video": False, "likes": None, "saved": False,
        "clicked": False, "hidden": False, "mod_reports": [], "user_reports": [], "all_awardings": [],
    }
    if author is not None:
        data["author_fullname"] = "t2_" + _b36(sum(map(ord, author)) * 7919)
    data.update(extra)
    return data


def _comment(cid: str, sid: str, parent: str, created: float, body: str, *, author: str | None,
             score: int = 1, **extra) -> dict:
    data = {
        "id": cid, "name": f"t1_{cid}", "parent_id": parent, "link_id": f"t3_{sid}", "body": body,
        "author": author if author is not None else "[deleted]", "created_utc": created, "created": created,
        "subreddit": "movies", "subreddit_id": MOVIES_ID, "subreddit_name_prefixed": "r/movies",
        "subreddit_type": "public", "score": score, "ups": score, "downs": 0, "distinguished": None,
        "stickied": False, "edited": False, "controversiality": 0, "is_submitter": False,
        "score_hidden": False, "archived": False, "locked": False, "collapsed": False, "gilded": 0,
        "permalink": f"/r/movies/comments/{sid}/x/{cid}/", "body_html": "<div class=\"md\"></div>",
        "send_replies": True, "likes": None, "saved": False, "all_awardings": [],
        "author_flair_text": None, "author_flair_css_class": None, "mod_reports": [], "user_reports": [],
    }
    if author is not None:
        data["author_fullname"] = "t2_" + _b36(sum(map(ord, author)) * 7919)
    data.update(extra)
    return data


@dataclass
class Thread:
    """One submission and its comments (Reddit API ``data`` dicts, without depth/replies)."""

    submission: dict
    comments: list[dict] = field(default_factory=list)


def make_threads(seed: int = 7) -> list[Thread]:
    """The seeded fixture: five r/movies threads exercising every shape the crawler must handle.

    - ``big``: 26 top-level comments (past a page budget of 15 -> top-level ``more``), a reply
      chain 9 deep (past ``max_depth`` -> "continue this thread"), a comment with 12 replies
      (nested ``more``), ties in ``created_utc`` (order falls back to the id).
    - ``empty``: no comments.
    - ``deleted``: deleted and removed comments and a deleted submission author, an edited
      comment, a distinguished stickied moderator comment, non-ASCII text.
    - ``r1``, ``r2``: random trees of 14 and 20 comments.
    """
    rng = random.Random(seed)
    next_id = [int("c000", 36)]

    def cid() -> str:
        next_id[0] += rng.randint(1, 40)
        return _b36(next_id[0])

    threads: list[Thread] = []
    base = 1_700_000_000.0

    # big
    sid = "big001"
    sub = _submission(sid, base, "What movie surprised you the most this year?", selftext="Mine was Past Lives.",
                      score=950, link_flair_text="Discussion")
    comments: list[dict] = []
    t = base + 10
    tops = []
    for i in range(26):
        c = cid()
        t += rng.choice([0, 5, 30])  # some equal timestamps: ordering falls back to the id
        comments.append(_comment(c, sid, f"t3_{sid}", t, f"Top-level opinion number {i}.", author=f"user{i % 9}",
                                 score=100 - i))
        tops.append(c)
    parent = tops[0]
    for depth in range(1, 10):  # a chain 9 replies deep under the first top-level comment
        c = cid()
        t += 7
        comments.append(_comment(c, sid, f"t1_{parent}", t, f"Chain reply at depth {depth}.", author=f"chain{depth % 3}"))
        parent = c
    for j in range(12):  # one comment with many replies
        c = cid()
        t += 3
        comments.append(_comment(c, sid, f"t1_{tops[1]}", t, f"Reply {j} to the second comment.", author=f"fan{j % 4}"))
    threads.append(Thread(sub, comments))

    # empty
    threads.append(Thread(_submission("emp002", base + 3600, "Trailer: a film nobody has commented on", score=3), []))

    # deleted / removed / edited / distinguished / non-ASCII
    sid = "del003"
    sub = _submission(sid, base + 7200, "Amélie (2001) — rewatch thread 🎬", selftext="[deleted]", author=None,
                      score=42, edited=base + 7300.0)
    t = base + 7210
    a, b, c_, d, e, f = (cid() for _ in range(6))
    comments = [
        _comment(a, sid, f"t3_{sid}", t, "[deleted]", author=None, score=5),
        _comment(b, sid, f"t1_{a}", t + 20, "Replying to a deleted comment still counts. Très bien!", author="cinephile"),
        _comment(c_, sid, f"t1_{b}", t + 40, "[removed]", author=None, score=0, controversiality=1),
        _comment(d, sid, f"t3_{sid}", t + 60, "Please keep spoilers tagged.", author="movies_mod",
                 distinguished="moderator", stickied=True, score=1),
        _comment(e, sid, f"t1_{d}", t + 80, "Edited: fixed a typo 😀", author="cinephile", edited=t + 95.5),
        _comment(f, sid, f"t1_{e}", t + 80, "Same second as its parent.", author="lurker"),
    ]
    threads.append(Thread(sub, comments))

    # random trees
    for sid, n in (("rnd004", 14), ("rnd005", 20)):
        sub = _submission(sid, base + rng.randint(10_000, 90_000), f"Random thread {sid}", score=rng.randint(1, 500))
        t = sub["created_utc"] + 1
        comments = []
        for _ in range(n):
            c = cid()
            t += rng.randint(0, 50)
            parent = f"t3_{sid}" if not comments or rng.random() < 0.35 else f"t1_{rng.choice(comments)['id']}"
            comments.append(_comment(c, sid, parent, t, f"Comment {c} says something about the film.",
                                     author=rng.choice(["alpha", "beta", "gamma", None]), score=rng.randint(-3, 60)))
            if comments[-1]["author"] == "[deleted]":
                comments[-1]["body"] = "[deleted]"
        threads.append(Thread(sub, comments))

    for thread in threads:
        thread.submission["num_comments"] = len(thread.comments)
    return threads


# ----------------------------------------------------------------------------- server


@dataclass
class Fault:
    """Answer ``times`` requests matching ``path`` (a regex), after ``after`` matching ones, with ``status``.

    ``status=0`` drops the connection without an answer (a network failure).
    """

    status: int
    path: str = ".*"
    after: int = 0
    times: int = 1
    headers: dict = field(default_factory=dict)
    seen: int = 0


def _listing(children: list[dict], after: str | None = None, dist: int | None = None) -> dict:
    return {"kind": "Listing", "data": {"after": after, "dist": dist, "modhash": None, "geo_filter": "",
                                        "children": children, "before": None}}


class FakeReddit:
    """The fake server. Use as a context manager; ``base_url`` serves both OAuth and token URLs.

    :param threads: the fixture (``make_threads()``).
    :param page_limit: most comments in one ``/comments`` page (reddit.com: about 200-500).
    :param max_depth: replies at this depth or deeper become "continue this thread" links
        (reddit.com: 10).
    :param more_batch: most requested children returned by one ``morechildren`` call (reddit.com: 100).
    :param more_budget: most descendants returned with them.
    :param listing_page: most submissions in one listing page (reddit.com: 100).
    """

    def __init__(self, threads: list[Thread], *, subreddit: str = "movies", page_limit: int = 15,
                 max_depth: int = 5, more_batch: int = 5, more_budget: int = 6, listing_page: int = 2,
                 client_id: str = CLIENT_ID, client_secret: str = CLIENT_SECRET,
                 ratelimit: tuple[str, str, str] | None = None):
        self.threads = {t.submission["id"]: t for t in threads}
        self.order = [t.submission["id"] for t in threads]
        self.subreddit = subreddit
        self.page_limit, self.max_depth = page_limit, max_depth
        self.more_batch, self.more_budget, self.listing_page = more_batch, more_budget, listing_page
        self.client_id, self.client_secret = client_id, client_secret
        self.ratelimit = ratelimit  # (remaining, used, reset) for every answer; None: a generous window
        self.faults: list[Fault] = []
        self.requests: list[tuple[str, str, dict]] = []  # (method, path, params+form)
        self.thread_requests: Counter = Counter()  # submission id -> API requests for that thread
        self.request_times: list[float] = []
        self.tokens_issued = 0
        self._lock = threading.Lock()
        self._comments: dict[str, dict] = {}
        self._children: dict[str, list[dict]] = {}
        for thread in threads:
            for c in thread.comments:
                self._comments[c["id"]] = c
                self._children.setdefault(c["parent_id"], []).append(c)
        for kids in self._children.values():  # "confidence"-like order: best first
            kids.sort(key=lambda c: (-c["score"], c["created_utc"], c["id"]))
        self._server: ThreadingHTTPServer | None = None

    # -- lifecycle
    def __enter__(self) -> "FakeReddit":
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def fail(self, status: int, *, path: str = ".*", after: int = 0, times: int = 1, headers: dict | None = None) -> Fault:
        fault = Fault(status, path, after, times, dict(headers or {}))
        self.faults.append(fault)
        return fault

    # -- rendering (pure helpers over the fixture)
    def _subtree_size(self, fullname: str) -> int:
        return sum(1 + self._subtree_size(c["name"]) for c in self._children.get(fullname, []))

    def _thing(self, c: dict, depth: int, replies) -> dict:
        data = copy.deepcopy(c)
        data["depth"] = depth
        data["replies"] = replies
        return {"kind": "t1", "data": data}

    def _more(self, parent: str, depth: int, kids: list[dict]) -> dict:
        count = sum(1 + self._subtree_size(k["name"]) for k in kids)
        first = kids[0]["id"]
        return {"kind": "more", "data": {"count": count, "name": f"t1_{first}", "id": first, "parent_id": parent,
                                         "depth": depth, "children": [k["id"] for k in kids]}}

    @staticmethod
    def _continue(parent: str, depth: int) -> dict:
        return {"kind": "more", "data": {"count": 0, "name": "t1__", "id": "_", "parent_id": parent,
                                         "depth": depth, "children": []}}

    def _nested(self, parent: str, depth: int, budget: list[int]) -> list[dict]:
        """Replies as /comments serves them: each comment carries its replies listing."""
        return self._tree(parent, depth, budget, nested=True)

    def _flat(self, parent: str, depth: int, budget: list[int]) -> list[dict]:
        """Replies as /api/morechildren serves them: a flat list in depth-first order."""
        return self._tree(parent, depth, budget, nested=False)

    def _tree(self, parent: str, depth: int, budget: list[int], nested: bool) -> list[dict]:
        kids = self._children.get(parent, [])
        if not kids:
            return []
        if depth >= self.max_depth:
            return [self._continue(parent, depth)]
        out = []
        for i, kid in enumerate(kids):
            if budget[0] <= 0:
                out.append(self._more(parent, depth, kids[i:]))
                break
            budget[0] -= 1
            if nested:
                replies = self._tree(kid["name"], depth + 1, budget, nested=True)
                out.append(self._thing(kid, depth, _listing(replies) if replies else ""))
            else:
                out.append(self._thing(kid, depth, ""))
                out.extend(self._tree(kid["name"], depth + 1, budget, nested=False))
        return out

    def _depth(self, c: dict) -> int:
        depth = 0
        while c["parent_id"].startswith("t1_"):
            c = self._comments[c["parent_id"][3:]]
            depth += 1
        return depth

    def comments_page(self, sid: str, limit: int, focus: str | None = None) -> list:
        thread = self.threads[sid]
        sub_listing = _listing([{"kind": "t3", "data": copy.deepcopy(thread.submission)}], dist=1)
        budget = [min(limit, self.page_limit)]
        if focus is None:
            children = self._nested(f"t3_{sid}", 0, budget)
        else:
            c = self._comments[focus]
            budget[0] -= 1
            replies = self._nested(c["name"], 1, budget)
            children = [self._thing(c, 0, _listing(replies) if replies else "")]
        return [sub_listing, _listing(children)]

    def morechildren(self, link_id: str, children: list[str]) -> dict:
        batch, rest = children[: self.more_batch], children[self.more_batch:]
        things, budget = [], [self.more_budget]
        for cid in batch:
            c = self._comments[cid]
            if c["link_id"] != link_id:
                continue
            depth = self._depth(c)
            things.append(self._thing(c, depth, ""))
            things.extend(self._flat(c["name"], depth + 1, budget))
        if rest:
            first = self._comments[rest[0]]
            things.append(self._more(first["parent_id"], self._depth(first), [self._comments[r] for r in rest]))
        return {"json": {"errors": [], "data": {"things": things}}}

    def listing(self, sort: str, params: dict) -> dict:
        subs = [self.threads[s].submission for s in self.order]
        if sort == "new":
            subs = sorted(subs, key=lambda s: -s["created_utc"])
        elif sort in ("top", "controversial"):
            subs = sorted(subs, key=lambda s: (-s["score"], s["id"]))
        start = 0
        if params.get("after"):
            names = [s["name"] for s in subs]
            start = names.index(params["after"]) + 1 if params["after"] in names else len(subs)
        size = min(int(params.get("limit", 25)), 100, self.listing_page)
        page = subs[start: start + size]
        after = page[-1]["name"] if page and start + size < len(subs) else None
        return _listing([{"kind": "t3", "data": copy.deepcopy(s)} for s in page], after=after, dist=len(page))


class _Handler(BaseHTTPRequestHandler):
    fake: FakeReddit
    protocol_version = "HTTP/1.1"
    wbufsize = 1 << 16  # one write per response: avoids 40 ms Nagle / delayed-ACK stalls on keep-alive

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def _send(self, status: int, body, headers: dict | None = None) -> None:
        raw = json.dumps(body).encode() if not isinstance(body, bytes) else body
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(raw)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if (self.headers.get("Connection") or "").lower() == "close":  # the token request asks for it
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(raw)

    def _ratelimit_headers(self) -> dict:
        fake = self.fake
        if fake.ratelimit is not None:
            remaining, used, reset = fake.ratelimit
        else:
            used = len(fake.requests)
            remaining, reset = f"{max(0, 1000 - used)}.0", "1"
        return {"x-ratelimit-remaining": str(remaining), "x-ratelimit-used": str(used), "x-ratelimit-reset": str(reset)}

    def _params(self) -> tuple[str, dict]:
        url = urlsplit(self.path)
        params = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            body = self.rfile.read(length).decode()
            params.update({k: v[-1] for k, v in parse_qs(body, keep_blank_values=True).items()})
        return url.path, params

    def do_GET(self) -> None:  # noqa: N802
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        import time

        fake = self.fake
        path, params = self._params()
        with fake._lock:
            fake.requests.append((method, path, params))
            fake.request_times.append(time.monotonic())
            thread_id = None
            m = re.match(r"^/comments/([0-9a-z]+)/", path)
            if m:
                thread_id = m.group(1)
            elif path.startswith("/api/morechildren"):
                thread_id = params.get("link_id", "")[3:]
            if thread_id:
                fake.thread_requests[thread_id] += 1
            for fault in fake.faults:
                if fault.times > 0 and re.search(fault.path, path):
                    fault.seen += 1
                    if fault.seen > fault.after:
                        fault.times -= 1
                        if fault.status == 0:  # drop the connection
                            self.close_connection = True
                            self.wfile.flush()
                            self.connection.shutdown(2)
                            return
                        self._send(fault.status, {"message": "fault", "error": fault.status},
                                   {**self._ratelimit_headers(), **fault.headers})
                        return
        if path == "/api/v1/access_token":
            self._token(params)
            return
        if self.headers.get("Authorization") != f"bearer {ACCESS_TOKEN}":
            self._send(401, {"message": "Unauthorized", "error": 401},
                       {"www-authenticate": 'Bearer realm="reddit", error="invalid_token"'})
            return
        self._api(method, path, params)

    def _token(self, params: dict) -> None:
        fake = self.fake
        expected = base64.b64encode(f"{fake.client_id}:{fake.client_secret}".encode()).decode()
        if self.headers.get("Authorization") != f"Basic {expected}" or params.get("grant_type") != "client_credentials":
            self._send(401, {"message": "Unauthorized", "error": 401})
            return
        fake.tokens_issued += 1
        self._send(200, {"access_token": ACCESS_TOKEN, "token_type": "bearer", "expires_in": 86400, "scope": "*"})

    def _api(self, method: str, path: str, params: dict) -> None:
        fake = self.fake
        headers = self._ratelimit_headers()
        m = re.fullmatch(r"/r/([^/]+)/(\w+)/?", path)
        if m and method == "GET":
            sub, sort = m.groups()
            if sub.lower() != fake.subreddit or sort not in LISTINGS:
                self._send(404, {"message": "Not Found", "error": 404}, headers)
                return
            self._send(200, fake.listing(sort, params), headers)
            return
        m = re.fullmatch(r"/comments/([0-9a-z]+)/(?:_/([0-9a-z]+)/?)?", path)
        if m and method == "GET":
            sid, focus = m.groups()
            if sid not in fake.threads or (focus and focus not in fake._comments):
                self._send(404, {"message": "Not Found", "error": 404}, headers)
                return
            self._send(200, fake.comments_page(sid, int(params.get("limit", 200)), focus), headers)
            return
        if path.rstrip("/") == "/api/morechildren":
            children = [c for c in params.get("children", "").split(",") if c]
            self._send(200, fake.morechildren(params.get("link_id", ""), children), headers)
            return
        if path.rstrip("/") == "/api/info" and method == "GET":
            names = params.get("id", "").split(",")
            found = [{"kind": "t3", "data": copy.deepcopy(fake.threads[n[3:]].submission)}
                     for n in names if n.startswith("t3_") and n[3:] in fake.threads]
            self._send(200, _listing(found), headers)
            return
        self._send(404, {"message": "Not Found", "error": 404}, headers)
