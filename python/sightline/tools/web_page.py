"""A fetched body as text for the model: HTML as Markdown of the page's main content, text and
JSON as they are; any other type refused by name, before its body is read.

HTML goes through markdownify (over Beautiful Soup's html.parser): a maintained converter
whose Markdown keeps headings, links, lists, tables and code blocks, in pure Python with two
small dependencies. Imported on first use only (~90 ms): never on start-up or a keystroke.
"""

from __future__ import annotations

import codecs
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bs4 import BeautifulSoup, Tag

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = frozenset(
    {
        "application/json",
        "application/ld+json",
        "application/xml",
        "application/javascript",
        "application/x-javascript",
        "application/ecmascript",
        "application/toml",
        "application/yaml",
        "application/x-yaml",
        "application/x-sh",
        "application/sql",
        "application/graphql",
    }
)
# Page chrome that is never the content: dropped wherever it is.
_NEVER = ("script", "style", "noscript", "template", "svg", "canvas", "iframe", "form", "button")
# The site's frame around the content: dropped when no <main>/<article> says where it is.
_FRAME = ("nav", "header", "footer", "aside")


def refusal(media: str) -> str | None:
    """None when the type is read; else why not (the model reads it)."""
    if is_text(media):
        return None
    if not media:
        return "refused: the server named no content type (fetch_url reads HTML, text and JSON)"
    return f"refused: {media} is not text (fetch_url reads HTML, text and JSON)"


def is_text(media: str) -> bool:
    return (
        media in HTML_TYPES
        or media.startswith("text/")
        or media in _TEXT_TYPES
        or media.endswith(("+json", "+xml"))
    )


def decode(body: bytes, charset: str | None) -> str:
    """Bytes as text in the charset the server named (UTF-8 when none or unknown)."""
    encoding = "utf-8"
    if charset:
        try:
            encoding = codecs.lookup(charset).name
        except LookupError:
            encoding = "utf-8"
    return body.decode(encoding, errors="replace")


def as_text(body: bytes, media: str, charset: str | None) -> tuple[str, str]:
    """(title, text): Markdown of an HTML page's main content, or the body as it is."""
    if media not in HTML_TYPES:
        return "", decode(body, charset)
    return html_markdown(body, charset)


def html_markdown(body: bytes, charset: str | None) -> tuple[str, str]:
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(body, "html.parser", from_encoding=charset)
    title = _title(soup)
    main = _main(soup)
    for tag in main.find_all(_NEVER):
        tag.decompose()
    if main.name in ("body", "[document]", "html"):
        for tag in main.find_all(_FRAME):
            tag.decompose()
    converter = MarkdownConverter(heading_style="ATX", bullets="-", strip=["img"])
    text = converter.convert_soup(main)
    text = re.sub(r"[ \t]+\n", "\n", text)
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return title, text


def _title(soup: BeautifulSoup) -> str:
    tag = soup.find("title")
    return " ".join(tag.get_text().split()) if tag is not None else ""


def _main(soup: BeautifulSoup) -> Tag | Any:
    """The page's main content as the page itself marks it: <main>, role=main, the one
    <article>, else the body."""
    for found in (
        soup.find("main"),
        soup.find(None, {"role": "main"}),
        soup.find("article") if len(soup.find_all("article")) == 1 else None,
        soup.find("body"),
    ):
        if found is not None:
            return found
    return soup
