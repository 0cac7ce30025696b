"""web_search's services, as their APIs take and answer them: Tavily's POST with its key,
Brave's header, SearXNG's JSON API; answers of the wrong shape give no hits, never an error."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sightline.domain.config import SearchConfig
from sightline.domain.errors import Refused
from sightline.tools import search, web_fetch
from tests.webserver import WebServer


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY"):
        monkeypatch.delenv(var, raising=False)


def test_tavily_is_posted_with_its_key_and_answered_as_hits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-test-123")
    with WebServer() as web:
        web.json(
            "/search",
            lambda q: {"results": [{"title": "T", "url": "https://t.example/", "content": "c"}]},
        )
        cfg = SearchConfig("tavily", web.url("/search"), None)
        url, headers, post = search.request(cfg, "a b", 3)
        resp = web_fetch.get(
            url,
            web_fetch.Limits(5, 10000),
            ["127.0.0.1"],
            accept=search._json_only,
            headers=headers,
            post=post,
        )
        seen = web.requests[0]
    assert seen.method == "POST" and seen.headers["Authorization"] == "Bearer tvly-test-123"
    assert json.loads(seen.body) == {"query": "a b", "max_results": 3}
    hits = search.parse("tavily", json.loads(resp.body), 3)
    assert hits == [search.Hit("T", "https://t.example/", "c")]


def test_brave_without_a_key_is_refused_before_anything_is_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("BRAVE_API_KEY", raising=False)
    with pytest.raises(Refused, match=r"no key for Brave Search: set \$BRAVE_API_KEY"):
        search.request(SearchConfig("brave", None, None), "q", 5)


def test_searxng_asks_its_json_api() -> None:
    url, headers, post = search.request(
        SearchConfig("searxng", "https://s.example/", None), "x y", 5
    )
    assert url == "https://s.example/search?q=x+y&format=json" and post is None
    assert headers == {"Accept": "application/json"}


@pytest.mark.parametrize(
    "doc",
    [
        None,
        [],
        {"results": "x"},
        {"results": [1, None, {"url": 5}]},
        {"web": None},
        {"web": "x"},
        {"web": {"results": {}}},
    ],
)
@pytest.mark.parametrize("backend", ["searxng", "brave", "tavily"])
def test_answers_of_the_wrong_shape_give_no_hits(backend: str, doc: Any) -> None:
    assert search.parse(backend, doc, 5) == []
