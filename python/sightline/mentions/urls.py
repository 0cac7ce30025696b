"""`@url:https://…` mentions: the page fetched when the message is sent, for the model.

The user typed the URL, so it is not asked about; the rest of fetch_url's rules hold (the
same checked, bounded GET: tools/web_fetch.py): loopback and private addresses only for
hosts in tools.network.allow_hosts, at most 5 redirects each checked, HTML as Markdown of
the main content, other types refused. Bounded like `@path`: at most mentions.max_file_bytes
of each page's text, within what remains of mentions.max_total_bytes. Fetched on the turn's
worker (Turn.late), never on pynvim's thread. The transcript says what each fetch got.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from sightline.domain import narrator, secrets
from sightline.domain.errors import Refused
from sightline.domain.mentions import Mention
from sightline.tools import network

if TYPE_CHECKING:
    from sightline.domain.config import NetworkConfig

log = logging.getLogger(__name__)

Say = Callable[[narrator.Note], None]


def parts(
    found: Sequence[Mention],
    net: NetworkConfig,
    max_file_bytes: int,
    remaining_bytes: int,
    say: Say,
) -> list[str]:
    """The parts of the message's `@url:` mentions, in order (others are not ours)."""
    out: list[str] = []
    if not any(m.kind == "url" for m in found):
        return out
    from sightline.tools import web_fetch, web_page

    for mention in found:
        if mention.kind != "url":
            continue
        url = mention.value
        attr = _attr(secrets.redact(url))
        try:
            resp = web_fetch.get(
                url,
                network.limits(net),
                net.allow_hosts,
                accept=web_page.refusal,
                follow_to=network.same_host_or_allowed(net),
            )
        except (Refused, web_fetch.FetchFailed) as err:
            why = err.message if isinstance(err, Refused) else str(err)
            say(narrator.url_not_fetched(secrets.redact(url), secrets.redact(why)))
            out.append(f'<url href="{attr}" error="true">\n[not fetched: {why}]\n</url>')
            continue
        say(
            narrator.fetched(
                secrets.redact(resp.url), resp.status, resp.reason, resp.size, resp.cut
            )
        )
        title, text = network.page_text(resp)
        body, cut = network.bound(text, max_file_bytes)
        size = len(body.encode("utf-8"))
        head = f'<url href="{attr}" status="{resp.status}"'
        if title:
            head += f' title="{_attr(secrets.redact(title))}"'
        if size > remaining_bytes:
            out.append(
                f'{head} omitted="true">\n[left out: {size} bytes do not fit in what '
                "remains of the context budget of this message]\n</url>"
            )
            continue
        remaining_bytes -= size
        body = body if body.endswith("\n") or not body else body + "\n"
        note = ""
        if cut or resp.cut:
            note = f"[cut: only the first {size} bytes of the page's text are shown]\n"
        out.append(f"{head}>\n{body}{note}</url>")
    return out


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
