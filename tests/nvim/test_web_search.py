"""web_search through a fake SearXNG and a fake Brave Search on loopback: offered only with a
configured service, asked unless the service's host is allowed, results as title, URL and
snippet, the service's key sent to it and redacted everywhere else."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent_util import claude, decide, idle, only_result, send, tool_names, wait_pending
from tests.conftest import transcript
from tests.fakeapi import FakeAnthropic, fake_api, text, tool_use
from tests.webserver import WebServer

__all__ = ["fake_api"]

BRAVE_KEY = "brv-test-key-98765"


@pytest.fixture
def web() -> Iterator[WebServer]:
    with WebServer() as server:
        yield server


def searxng(web: WebServer) -> None:
    def answer(query: dict[str, list[str]]) -> Any:
        assert query["format"] == ["json"]
        q = query["q"][0]
        return {
            "query": q,
            "results": [
                {"title": f"{q} — docs", "url": "https://docs.example.org/a", "content": "First."},
                {"title": "Second\nhit", "url": "https://example.org/b", "content": "  two  "},
                {"title": "no url"},
                "junk",
            ],
        }

    web.json("/search", answer)


def search(query: str, **more: Any) -> Any:
    return tool_use("web_search", {"query": query, **more})


def test_without_a_search_service_web_search_is_not_offered(
    nvim_factory: Any, fake_api: FakeAnthropic
) -> None:
    nv = claude(nvim_factory, fake_api)
    send(nv)
    idle(nv)
    assert "web_search" not in tool_names(fake_api) and "fetch_url" in tool_names(fake_api)


def test_searxng_results_come_as_title_url_and_snippet(
    nvim_factory: Any, fake_api: FakeAnthropic, web: WebServer
) -> None:
    searxng(web)
    network = {"allow_hosts": ["127.0.0.1"], "search": {"backend": "searxng", "url": web.base}}
    nv = claude(nvim_factory, fake_api, tools={"network": network})
    fake_api.script(search("neovim extmarks"), text("ok"))
    send(nv)
    idle(nv)
    assert "web_search" in tool_names(fake_api)
    result = only_result(fake_api)
    assert "is_error" not in result
    body = result["content"]
    assert body.startswith("2 results from SearXNG for: neovim extmarks")
    assert (
        "1. neovim extmarks — docs\n   https://docs.example.org/a\n   First.\n"
        "2. Second hit\n   https://example.org/b\n   two"
    ) in body
    assert web.paths() == ["/search"]
    assert any(line.startswith("⌕ SearXNG: neovim extmarks · 2 results") for line in transcript(nv))


def test_a_service_not_allowed_is_asked_and_its_key_stays_secret(
    nvim_factory: Any, fake_api: FakeAnthropic, web: WebServer, isolated_env: Path
) -> None:
    """Brave Search, through the proxy the environment names (the service's host is not
    allowed), its key from api_key_cmd: sent in its header, redacted from what the model
    and the user see."""

    def brave(query: dict[str, list[str]]) -> Any:
        seen = web.requests[-1].headers
        ok = seen.get("X-Subscription-Token") == BRAVE_KEY
        title = f"echo {seen.get('X-Subscription-Token')}" if ok else "wrong key"
        return {
            "web": {
                "results": [
                    {"title": title, "url": "https://x.example/", "description": query["q"][0]}
                ]
            }
        }

    web.json("/res/v1/web/search", brave)
    network = {
        "search": {
            "backend": "brave",
            "url": "http://api.search.example.test/res/v1/web/search",
            "api_key_cmd": ["echo", BRAVE_KEY],
        }
    }
    nv = claude(nvim_factory, fake_api, tools={"network": network})
    env = {"http_proxy": web.base, "no_proxy": "127.0.0.1,localhost"}
    nv.exec_lua("for k, v in pairs(...) do vim.env[k] = v end", env)
    fake_api.script(search("gate rules", count=1), text("ok"))
    send(nv)
    assert wait_pending(nv)["pending"] == "search: gate rules (Brave Search)"
    assert web.requests == []
    decide(nv, "accept")
    idle(nv)
    result = only_result(fake_api)
    assert "1. echo [REDACTED]" in result["content"] and "gate rules" in result["content"]
    assert BRAVE_KEY not in str(fake_api.requests[1].body)
    assert not any(BRAVE_KEY in line for line in transcript(nv))
    assert web.requests[0].path.startswith("http://api.search.example.test/res/v1/web/search?q=")
