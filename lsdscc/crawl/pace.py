"""Client-side pacing of Reddit API requests: at most N requests in any sliding window.

Since July 2023 Reddit's free API tier allows 100 queries per minute per OAuth client
(averaged over a 10-minute window; the ``x-ratelimit-*`` headers say what is left). prawcore
paces from those headers when the server sends them; :class:`RequestPacer` is the second
guard, kept on our side: every HTTP request (the token request included) waits until fewer
than ``per_window`` requests were made in the last ``window`` seconds. So a crawl never
exceeds the published limit, even behind a proxy or mirror that drops the headers.
"""

from __future__ import annotations

import collections
import logging
import time
from typing import Callable

log = logging.getLogger("lsdscc.crawl.crawler")

#: Reddit's free-tier limit per OAuth client (requests per minute), since 2023-07.
REQUESTS_PER_MINUTE = 100


class RequestPacer:
    """At most ``per_window`` requests in any ``window`` seconds (default: 100 per minute).

    ``clock`` (monotonic seconds) and ``sleep`` are injectable; :meth:`wait` is called before
    each request and returns the seconds it slept.
    """

    def __init__(self, per_window: int = REQUESTS_PER_MINUTE, window: float = 60.0, *,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep):
        if not isinstance(per_window, int) or per_window < 1:
            raise ValueError(f"requests per window must be a positive integer, got {per_window!r}")
        if not window > 0:
            raise ValueError(f"window must be positive seconds, got {window!r}")
        self.per_window, self.window = per_window, float(window)
        self.clock, self.sleep = clock, sleep
        self.sent: collections.deque = collections.deque()
        self.waited = 0.0

    def _expire(self, now: float) -> None:
        while self.sent and self.sent[0] <= now - self.window:
            self.sent.popleft()

    def wait(self) -> float:
        """Sleep until one more request fits in the window; record it; return the wait."""
        now = self.clock()
        self._expire(now)
        pause = 0.0
        if len(self.sent) >= self.per_window:
            pause = max(0.0, self.sent[0] + self.window - now)
            log.info("rate limit: %d requests in the last %.0f s; waiting %.1f s", len(self.sent), self.window, pause)
            if pause:
                self.sleep(pause)
            self.sent.popleft()  # the oldest has left the window (also if the sleep woke a little early)
            now = max(self.clock(), now + pause)
            self._expire(now)
        self.sent.append(now)
        self.waited += pause
        return pause
