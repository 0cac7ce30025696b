"""The bounded GET behind fetch_url, web_search and `@url:`, against loopback servers the
tests start: HTML to Markdown, redirect chains, refused addresses (said by which rule,
nothing sent), a 50 MB body cut, a stalled server timed out, non-text refused, proxies
from the environment honoured."""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sightline.domain import netrules
from sightline.domain.errors import Refused
from sightline.tools import web_fetch, web_page
from tests.webserver import WebServer

ALLOWED = ("127.0.0.1",)
LIMITS = web_fetch.Limits(timeout_s=5.0, max_bytes=1_000_000)

PAGE = """<!doctype html><html><head><title>Gate &amp; policy</title>
<style>body { color: red }</style><script>alert('x')</script></head>
<body><nav><a href="/">Home</a> | <a href="/blog">Blog</a></nav>
<header>Site banner</header>
<main><h1>The gate</h1><p>Every write is a <strong>proposal</strong>; see
<a href="https://example.org/design">the design</a>.</p>
<ul><li>accept</li><li>reject</li></ul>
<pre><code>make test</code></pre></main>
<footer>© someone</footer></body></html>"""


@pytest.fixture(autouse=True)
def no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.delenv("ALL_PROXY", raising=False)
    monkeypatch.setenv("no_proxy", "")


@pytest.fixture
def web() -> Iterator[WebServer]:
    with WebServer() as server:
        yield server


def fetch(
    url: str, limits: web_fetch.Limits = LIMITS, allowed: tuple[str, ...] = ALLOWED
) -> web_fetch.Response:
    return web_fetch.get(url, limits, allowed, accept=web_page.refusal)


def test_html_becomes_markdown_of_the_main_content(web: WebServer) -> None:
    web.page("/doc", PAGE)
    resp = fetch(web.url("/doc"))
    title, text = web_page.as_text(resp.body, resp.content_type, resp.charset)
    assert (resp.status, resp.content_type, title) == (200, "text/html", "Gate & policy")
    assert text.splitlines()[0] == "# The gate"
    assert "**proposal**" in text and "[the design](https://example.org/design)" in text
    assert "- accept" in text and "make test" in text
    # The frame and the code around the content are not the content.
    for gone in ("Home", "Site banner", "someone", "alert", "color: red"):
        assert gone not in text


def test_text_and_json_come_as_they_are(web: WebServer) -> None:
    web.page("/a.json", '{"a": [1, 2]}', "application/json")
    web.page("/notes.txt", "héllo\n<b>not html</b>\n", "text/plain; charset=utf-8")
    resp = fetch(web.url("/a.json"))
    assert web_page.as_text(resp.body, resp.content_type, resp.charset) == ("", '{"a": [1, 2]}')
    resp = fetch(web.url("/notes.txt"))
    assert (
        web_page.as_text(resp.body, resp.content_type, resp.charset)[1]
        == "héllo\n<b>not html</b>\n"
    )


@pytest.mark.parametrize("ctype", ["image/png", "application/octet-stream", "application/pdf", ""])
def test_other_types_are_refused_by_name_before_the_body_is_read(
    web: WebServer, ctype: str
) -> None:
    web.big("/file", 50 * 2**20, ctype)
    started = time.monotonic()
    with pytest.raises(Refused) as err:
        fetch(web.url("/file"))
    said = f"{ctype} is not text" if ctype else "the server named no content type"
    assert said in err.value.message
    assert time.monotonic() - started < 3  # closed after the headers, 50 MB never read


def test_a_redirect_chain_is_followed_and_named(web: WebServer) -> None:
    web.page("/end", "done", "text/plain")
    for i in range(5):
        web.redirect(f"/r{i}", f"/r{i + 1}" if i < 4 else "/end", 301 + (i % 2))
    resp = fetch(web.url("/r0"))
    assert resp.body == b"done" and resp.url == web.url("/end")
    assert resp.redirects == [web.url(f"/r{i}") for i in range(5)]


def test_more_than_five_redirects_stop(web: WebServer) -> None:
    for i in range(7):
        web.redirect(f"/r{i}", f"/r{i + 1}")
    with pytest.raises(web_fetch.FetchFailed, match="more than 5 redirects"):
        fetch(web.url("/r0"))
    assert web.paths() == [f"/r{i}" for i in range(6)]


@pytest.mark.parametrize(
    ("target", "rule"),
    [
        ("http://localhost:{port}/secret", "a loopback address"),
        ("http://127.0.0.2:{port}/secret", "127.0.0.2, a loopback address"),
        ("http://[::1]:{port}/secret", "a loopback address"),
        ("file:///etc/passwd", "only http:// and https://"),
    ],
)
def test_a_redirect_to_a_refused_address_is_refused_and_nothing_is_sent(
    web: WebServer, target: str, rule: str
) -> None:
    web.redirect("/go", target.format(port=web.port))
    with pytest.raises(Refused) as err:
        fetch(web.url("/go"))
    assert rule in err.value.message and "redirect to" in err.value.message
    assert web.paths() == ["/go"]


def test_an_unallowed_loopback_url_is_refused_by_its_rule(web: WebServer) -> None:
    web.page("/doc", "hi", "text/plain")
    with pytest.raises(Refused) as err:
        fetch(web.url("/doc"), allowed=())
    assert "127.0.0.1, a loopback address" in err.value.message
    assert netrules.ALLOW_KEY in err.value.message
    assert web.requests == []


def test_a_50_mb_body_is_cut_at_the_cap(web: WebServer) -> None:
    web.big("/huge", 50 * 2**20)
    started = time.monotonic()
    resp = fetch(web.url("/huge"), web_fetch.Limits(10.0, 2**20))
    assert resp.cut and resp.size == 2**20
    assert time.monotonic() - started < 5
    assert web.sent < 50 * 2**20  # the server was not read to its end


@pytest.mark.parametrize("first", [b"", b"partial "])
def test_a_stalled_server_is_timed_out(web: WebServer, first: bytes) -> None:
    web.stall("/slow", first)
    started = time.monotonic()
    with pytest.raises(web_fetch.FetchFailed, match=r"timed out after 0.5 s"):
        fetch(web.url("/slow"), web_fetch.Limits(0.5, 2**20))
    assert time.monotonic() - started < 3


def test_a_server_that_never_answers_is_timed_out() -> None:
    import socket

    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(1)  # accepts the connection, never reads or writes
        port = listener.getsockname()[1]
        with pytest.raises(web_fetch.FetchFailed, match="timed out"):
            fetch(f"http://127.0.0.1:{port}/", web_fetch.Limits(0.4, 1000))


def test_the_proxy_from_the_environment_is_honoured(
    web: WebServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    web.page("/page", "via the proxy", "text/plain")
    monkeypatch.setenv("http_proxy", web.base)
    resp = fetch("http://docs.example.test/page", allowed=("docs.example.test",))
    assert resp.body == b"via the proxy"
    assert [r.path for r in web.requests] == ["http://docs.example.test/page"]


def test_no_proxy_bypasses_it(web: WebServer, monkeypatch: pytest.MonkeyPatch) -> None:
    web.page("/page", "direct", "text/plain")
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")  # would fail: discard port
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    assert fetch(web.url("/page")).body == b"direct"


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("ftp://example.org/x", "only http:// and https://"),
        ("https://user:pw@example.org/", "user name or password"),
        ("http:///nohost", "names no host"),
        ("http://example.org:99999/", "port"),
        ("http://exa mple.org/", "spaces"),
        (42, "required"),
    ],
)
def test_bad_urls_are_refused_with_what_is_wrong(url: object, why: str) -> None:
    with pytest.raises(Refused, match=why):
        netrules.parse_url(url)


@pytest.mark.parametrize(
    ("address", "rule"),
    [
        ("169.254.169.254", "a cloud metadata address"),
        ("fd00:ec2::254", "a cloud metadata address"),
        ("169.254.1.1", "a link-local address"),
        ("fe80::1", "a link-local address"),
        ("10.1.2.3", "a private address"),
        ("192.168.0.1", "a private address"),
        ("172.16.5.5", "a private address"),
        ("fc00::1", "a private address"),
        ("100.64.0.1", "a private address"),
        ("0.0.0.0", "an unspecified address"),
        ("::ffff:127.0.0.1", "a loopback address"),
        ("93.184.215.14", None),
        ("2606:4700::1", None),
    ],
)
def test_each_address_range_has_its_rule(address: str, rule: str | None) -> None:
    assert netrules.address_rule(ipaddress.ip_address(address)) == rule


def test_an_allowed_host_reaches_a_private_address_and_only_it() -> None:
    netrules.check_addresses("printer.lan", ["192.168.1.9"], ["printer.lan"])
    netrules.check_addresses("a.example.org", ["10.0.0.1"], ["*.example.org"])
    with pytest.raises(Refused, match=r"printer\.lan resolves to 192\.168\.1\.9, a private"):
        netrules.check_addresses("printer.lan", ["192.168.1.9"], ["*.printer.lan"])
    # One bad address among good ones refuses the host.
    with pytest.raises(Refused, match=r"10\.0\.0\.1"):
        netrules.check_addresses("mixed.example", ["93.184.215.14", "10.0.0.1"], [])


@given(st.ip_addresses())
def test_an_address_is_refused_unless_public_whatever_its_form(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address,
) -> None:
    """The one rule: a host that is not allowed reaches global addresses only, and an
    IPv4-mapped IPv6 address is judged as the IPv4 address it is."""
    rule = netrules.address_rule(address)
    plain = address
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        plain = address.ipv4_mapped
        assert rule == netrules.address_rule(plain)
    if rule is None:
        assert plain.is_global and not plain.is_loopback and not plain.is_private
    else:
        with pytest.raises(Refused, match=rule):
            netrules.check_addresses("h.example", [str(address)], [])
