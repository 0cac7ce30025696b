"""`@` completion for the composer: the core's side of `complete.warm` / `complete.candidates`.

One file list is kept for the current workspace, listed in the background
when the composer opens (`warm`), so a keystroke only ranks.  The active
extensions are read again at the start of each mention (the `@` itself),
which costs a directory scan, not a keystroke's budget.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sightline.domain import extensions
from sightline.domain.mentions import mention_at_end
from sightline.mentions import menu_fit
from sightline.mentions.completion import (
    CompletionItem,
    CompletionSession,
    FileListCache,
    editor_items,
)

log = logging.getLogger(__name__)

ExtraItems = Callable[[str, str, list[CompletionItem]], list[CompletionItem]]
# Items for a `/` command typed at the start of the composer's first line: (workspace, the
# user's config folder, the line up to the cursor) -> (the character the items replace
# from, -1 for none; the items) (sightline.slash.service).
SlashItems = Callable[[str, str | None, str], tuple[int, list[CompletionItem]]]

# A listing younger than this is reused when the composer opens again.
STALE_AFTER_S = 2.0
# A request made before the first listing arrived (the composer just opened) may
# wait this long for it; once there is a list, nothing waits (a refresh swaps in).
FIRST_LIST_WAIT_S = 0.2
# How soon the composer asks again while an item says something is on its way.
REFRESH_MS = 250


class ComposerCompletion:
    def __init__(
        self,
        dirs: extensions.ExtensionDirs | None = None,
        extra: ExtraItems | None = None,
        slash: SlashItems | None = None,
    ) -> None:
        self._dirs = dirs
        self._extra = extra  # more items for a token: the MCP servers' resources
        self._slash = slash
        self._cache: FileListCache | None = None
        self._session: CompletionSession | None = None
        self._extensions: list[tuple[str, str | None]] | None = None

    def warm(self, workspace: str) -> dict[str, Any]:
        """The composer opened: make sure a fresh file list is on its way.  Answers
        whether a listing runs and, once none does, how many files the list holds (which
        a benchmark polls); the composer sends this as a notification."""
        self._session_for(workspace)
        assert self._cache is not None
        self._cache.refresh_if_stale(STALE_AFTER_S)
        self._extensions = None
        busy, index = self._cache.busy, self._cache.index()
        # (counting a list still being prepared would order it here, on the loop thread)
        return {"listing": busy, "files": len(index) if index is not None and not busy else None}

    def wait_idle(self, timeout: float | None = None) -> bool:
        """For tests and benchmarks: wait until no listing runs."""
        return self._cache.wait_idle(timeout) if self._cache is not None else True

    def forget_extensions(self) -> None:
        """Extensions were installed, removed or switched: read them again on next use."""
        self._extensions = None

    def candidates(
        self,
        workspace: str,
        *,
        before: str | None = None,
        token: str | None = None,
        room: int | None = None,
        row: int | None = None,
        config_dir: str | None = None,
    ) -> dict[str, Any]:
        """Items for the mention at the end of `before` (the line up to the cursor), or for
        `token` (the text after `@`).  `start` is the byte column of the `@` in `before`,
        -1 when the cursor is not in a mention (then there are no items).  `room`: the
        screen cells from the cursor to the right edge; the menu is fitted to the cells it
        has from the `@` (menu_fit.py).  `refresh_ms`, when set: an item says something is
        on its way (MCP servers starting); ask again after that long while the menu is open
        for the same text.  `row` (0-based) is the composer line `before` is on: on the first
        one, a `/` at its start completes a command (`config_dir`: the user's
        `stdpath('config')`, where their prompt files are)."""
        start = 0
        line = before or ""
        if token is None and row == 0 and self._slash is not None and slash_at_start(line):
            at, items = self._slash(workspace, config_dir, line)
            if at < 0:
                return {"start": -1, "items": columns([])}
            if room is not None:
                items = menu_fit.fit(items, room + menu_fit.cells(line[at:]))
            answer: dict[str, Any] = {
                "start": len(line[:at].encode("utf-8")),
                "items": columns(items),
            }
            if any(item.style.pending for item in items):
                answer["refresh_ms"] = REFRESH_MS
            return answer
        if token is None:
            found = mention_at_end(before or "")
            if found is None:
                return {"start": -1, "items": columns([])}
            at, token = found
            start = len((before or "")[:at].encode("utf-8"))
        session = self._session_for(workspace)
        if token == "" or self._extensions is None:
            self._extensions = self._active(workspace)
        items = session.complete(token, self._extensions, wait=FIRST_LIST_WAIT_S)
        if "\\" not in token and not token.startswith("ext:"):
            # At the top level of `@`, before extensions and files.
            fixed = editor_items(token)
            items = (fixed + [i for i in items if i.word not in {f.word for f in fixed}])[
                : session.max_items
            ]
        if self._extra is not None:
            items = self._extra(workspace, token, items)
        if room is not None:
            items = menu_fit.fit(items, room + menu_fit.cells("@" + token))
        result: dict[str, Any] = {"start": start, "items": columns(items)}
        if any(item.style.pending for item in items):
            result["refresh_ms"] = REFRESH_MS
        return result

    def _session_for(self, workspace: str) -> CompletionSession:
        root = Path(workspace)
        if self._cache is None or self._session is None or self._cache.workspace != root:
            # Only the current workspace is kept: a large list costs tens of MB.
            self._cache = FileListCache(root)
            self._cache.refresh_async()
            self._session = CompletionSession(self._cache)
            self._extensions = None
        return self._session

    def _active(self, workspace: str) -> list[tuple[str, str | None]]:
        found = extensions.active_extensions(workspace, self._dirs)
        return [(ext.name, ext.description) for ext in found.values()]


def slash_at_start(before: str) -> bool:
    """`before` (the first line up to the cursor) starts with a `/` command."""
    return before.startswith("/") and not before.startswith("//")


def columns(items: list[CompletionItem]) -> dict[str, list[Any]]:
    """The items as one list per field, best first: the composer rebuilds Neovim's
    complete-items from them.  Neovim turns a hundred small maps into Lua tables about
    three times slower than a few lists, and this is on every keystroke.  `label` is what
    the menu's kind column shows and `lsp` the LSP CompletionItemKind the engines get
    (completion.KIND_STYLES); `kind` names the item's kind for the user_data."""
    return {
        "word": [item.word for item in items],
        "abbr": [item.abbr for item in items],
        "menu": [item.menu for item in items],
        "info": [item.info for item in items],
        "kind": [item.kind for item in items],
        "label": [item.style.label for item in items],
        "lsp": [item.style.lsp for item in items],
    }
