"""Fit the `@` menu into the screen cells it has.

Neovim draws its popup menu from the mention's `@` to the right; with too little room it
keeps that column and clips what does not fit at the screen's edge, so at 160 columns with
the pane on the right a long path pushed the kind and menu columns off the screen. The
menu is fitted here to `room`, the cells from the `@` to the right edge, as Neovim counts
its columns (popupmenu.c): one leading space (left of the `@`, not counted), the abbr, a
space and the kind, a space and the menu, a trailing space, and a scrollbar.

What is cut: a description loses its end; a path or resource (the abbr) keeps its last
segment and as much of its start as fits, with `…` in between, and the whole of it moves
to the item's `info` (the popup beside the menu), so nothing is lost. `word`, what an item
inserts, never changes.
"""

from __future__ import annotations

import dataclasses
import unicodedata
from collections.abc import Sequence

from sightline.mentions.completion import CompletionItem

ELLIPSIS = "…"
# Cells Neovim adds around the columns: the spaces before the kind and the menu, the
# trailing one, and the scrollbar (drawn when there are more items than rows).
FRAME_CELLS = 4
# A menu column cut narrower than this says nothing: it is left out, the abbr gets its room.
MIN_MENU_CELLS = 12
# The abbr keeps at least this much of its room when the menu competes for it.
ABBR_SHARE = 0.6
# A cut start shorter than this (without a whole segment) is left out.
MIN_HEAD_CHARS = 4


def cells(text: str) -> int:
    """Display cells of `text` as a terminal draws it: wide (East Asian W/F) characters take
    two, combining marks none."""
    if text.isascii():
        return len(text)  # (most paths: this runs on every keystroke, for every item)
    total = 0
    for c in text:
        if unicodedata.combining(c):
            continue
        total += 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1
    return total


def cut_end(text: str, width: int) -> str:
    """`text` in at most `width` cells, its end replaced by `…` when it must be cut."""
    if cells(text) <= width:
        return text
    if width <= 0:
        return ""
    return _head(text, width - 1).rstrip() + ELLIPSIS


def _tail(text: str, width: int) -> str:
    """The longest end of `text` that fits in `width` cells."""
    if text.isascii():
        return text[len(text) - width :] if width > 0 else ""
    out: list[str] = []
    used = 0
    for c in reversed(text):
        w = cells(c)
        if used + w > width:
            break
        out.append(c)
        used += w
    return "".join(reversed(out))


def _head(text: str, width: int) -> str:
    """The longest start of `text` that fits in `width` cells."""
    if text.isascii():
        return text[: max(width, 0)]
    out: list[str] = []
    used = 0
    for c in text:
        w = cells(c)
        if used + w > width:
            break
        out.append(c)
        used += w
    return "".join(out)


def cut_middle(text: str, width: int) -> str:
    """A path or uri in at most `width` cells: its last segment (from the last `/`) kept
    whole when it fits, after the whole leading segments that fit (or a start of at least
    MIN_HEAD_CHARS) and a `…`: `src/very/…/module.py`, `…/module.py`; else its end after a
    `…`."""
    if cells(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS if width == 1 else ""
    slash = text.rstrip("/").rfind("/")
    last = text[slash:] if slash > 0 else ""
    if last and cells(last) + 1 <= width:
        head = _head(text[:slash], width - 1 - cells(last))
        if "/" in head:
            head = head[: head.rfind("/") + 1]  # whole segments
        elif len(head) < MIN_HEAD_CHARS:
            head = ""  # `sr…/x.py` says less than `…/x.py`
        return head + ELLIPSIS + last
    return ELLIPSIS + _tail(text, width - 1)


def fit(items: Sequence[CompletionItem], room: int | None) -> list[CompletionItem]:
    """The items with abbr and menu bounded so that Neovim's menu fits in `room` cells
    (None: as they are)."""
    items = list(items)
    if room is None or not items:
        return items
    kind = max(cells(i.style.label) for i in items)
    free = room - FRAME_CELLS - kind  # for the abbr and the menu columns
    abbr = max(cells(i.abbr) for i in items)
    menu = max(cells(i.menu) for i in items)
    if abbr + menu <= free:
        return items
    # The abbr first: it names what is inserted. Whole when it fits, the menu getting what
    # is left; when it must be cut anyway, the menu keeps its share. A menu column too
    # narrow to read is left out (and its space before it).
    menu_w = free - abbr if abbr <= free + 1 else min(menu, int(free * (1 - ABBR_SHARE)))
    if menu_w < min(menu, MIN_MENU_CELLS):
        menu_w = 0
    abbr_w = free - menu_w if menu_w else free + 1
    return [_fit_item(i, max(abbr_w, 1), menu_w) for i in items]


def _fit_item(item: CompletionItem, abbr_w: int, menu_w: int) -> CompletionItem:
    if cells(item.abbr) <= abbr_w and cells(item.menu) <= menu_w:
        return item  # (most items of a list that needs fitting)
    abbr = cut_middle(item.abbr, abbr_w)
    menu = cut_end(item.menu, menu_w)
    info = item.info
    if abbr != item.abbr or menu != item.menu:
        # What the menu could not show is in the popup beside it.
        whole = [item.abbr] if abbr != item.abbr else []
        if menu != item.menu and item.menu and item.menu not in info:
            whole.append(item.menu)
        if info:
            whole.append(info)
        info = "\n".join(dict.fromkeys(whole))
    return dataclasses.replace(item, abbr=abbr, menu=menu, info=info)
