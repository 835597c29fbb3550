"""A fake web search API on 127.0.0.1 speaking both Tavily's and Brave Search's wire format.

- Tavily: ``POST /search`` with ``Authorization: Bearer <key>`` and a JSON body
  (``query``, ``max_results``...) -> ``{"query", "results": [{"title", "url", "content",
  "score"}], "response_time"}``; a wrong key gets 401 ``{"detail": {"error": ...}}``.
- Brave: ``GET /res/v1/web/search?q=...&count=N`` with ``X-Subscription-Token: <key>`` ->
  ``{"type": "search", "query": {"original"}, "web": {"type": "search", "results": [{"title",
  "url", "description"}]}}`` (descriptions carry ``<strong>`` markup like the real API); a
  wrong key gets 401 with Brave's error object.

Results come from :attr:`FakeSearchAPI.pages` (query -> list of ``(title, url, text)``), else
three made-up pages about the query. :meth:`fail_next` answers the next requests with an
error status. Every request is recorded.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.support.fakes.local_server import LocalServer

__all__ = ["FakeSearchAPI", "SearchRequest"]


@dataclass(frozen=True)
class SearchRequest:
    """One request the fake received."""

    provider: str  # tavily | brave
    query: str
    count: int | None
    headers: dict[str, str]


class FakeSearchAPI(LocalServer):
    """See the module docstring."""

    name = "fake search API"

    def __init__(self, *, key: str = "test-search-key") -> None:
        super().__init__()
        self.key = key
        self.pages: dict[str, list[tuple[str, str, str]]] = {}
        self.requests: list[SearchRequest] = []
        self._failures: deque[int] = deque()

    @property
    def url(self) -> str:
        """The server root (a provider's ``base_url``)."""
        return f"http://127.0.0.1:{self.port}"

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/search", self._tavily)
        app.router.add_get("/res/v1/web/search", self._brave)

    def fail_next(self, status: int, times: int = 1) -> None:
        """Answer the next ``times`` requests with ``status``."""
        self._failures.extend([status] * times)

    def _pages_for(self, query: str, count: int) -> list[tuple[str, str, str]]:
        pages = self.pages.get(query)
        if pages is None:
            slug = "-".join(query.lower().split())[:40]
            pages = [(f"{query} - result {i}", f"https://example.org/{slug}/{i}",
                      f"Page {i} says something about {query}.") for i in range(1, 4)]
        return pages[:count]

    async def _tavily(self, request: web.Request) -> web.Response:
        body: dict[str, Any] = await request.json()
        self.requests.append(SearchRequest("tavily", str(body.get("query")), body.get("max_results"),
                                           dict(request.headers)))
        if request.headers.get("Authorization") != f"Bearer {self.key}":
            return web.json_response({"detail": {"error": "Unauthorized: missing or invalid API key."}}, status=401)
        if self._failures:
            status = self._failures.popleft()
            return web.json_response({"detail": {"error": f"scripted failure {status}"}}, status=status)
        count = int(body.get("max_results") or 5)
        results = [{"title": t, "url": u, "content": c, "score": round(0.9 - i / 10, 2)}
                   for i, (t, u, c) in enumerate(self._pages_for(str(body["query"]), count))]
        return web.json_response({"query": body["query"], "follow_up_questions": None, "answer": None,
                                  "images": [], "results": results, "response_time": 0.42})

    async def _brave(self, request: web.Request) -> web.Response:
        query = request.query.get("q", "")
        count = int(request.query.get("count", "20"))
        self.requests.append(SearchRequest("brave", query, count, dict(request.headers)))
        if request.headers.get("X-Subscription-Token") != self.key:
            return web.json_response({"type": "ErrorResponse", "error": {
                "id": "c0ffee", "status": 401, "code": "SUBSCRIPTION_TOKEN_INVALID",
                "detail": "The provided subscription token is invalid."}}, status=401)
        if self._failures:
            status = self._failures.popleft()
            return web.json_response({"type": "ErrorResponse", "error": {"status": status, "code": "SCRIPTED"}},
                                     status=status)
        results = [{"title": t, "url": u, "description": c.replace(query, f"<strong>{query}</strong>"),
                    "type": "search_result", "language": "en"}
                   for t, u, c in self._pages_for(query, count)]
        return web.json_response({"type": "search", "query": {"original": query},
                                  "web": {"type": "search", "results": results}})
