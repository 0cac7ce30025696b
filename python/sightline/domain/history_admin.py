"""What the history picker does besides opening: preview, rename, delete.

Conversation files stay append-only and are written only by the core that owns them, so a
title lives beside them (`titles.json` in the store, written atomically), and a delete
removes a file only while no core holds it (its lock is taken first): a conversation open
in any Neovim is never lost.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
from pathlib import Path
from typing import Any

from sightline.domain import history
from sightline.domain.errors import Refused
from sightline.domain.extensions import atomic_write_text

TITLES = "titles.json"
PREVIEW_LINES = 40  # of each side of the last exchange; the picker shows what fits


def _store_path(directory: Path, raw: str) -> Path:
    try:
        return history.store_path(directory, raw)
    except ValueError as err:
        raise Refused(str(err)) from None


def titles(directory: Path) -> dict[str, str]:
    """The user's titles by conversation file name (stem); a damaged file counts as none."""
    try:
        data = json.loads((directory / TITLES).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, str)}


def rename(directory: Path, raw: str, title: str) -> str:
    """Give a conversation of the store a title; returns it as it will be listed."""
    path = _store_path(directory, raw)
    title = " ".join(title.split())[:80]
    if not title:
        raise Refused("a title needs some text")
    names = titles(directory)
    names[path.stem] = title
    try:
        atomic_write_text(directory / TITLES, json.dumps(names, ensure_ascii=False, indent=1))
    except OSError as err:
        raise Refused(f"could not save the title: {err.strerror or err}") from None
    return title


def delete(directory: Path, raw: str) -> None:
    """Remove a conversation's file, unless a core holds it (this one or another)."""
    path = _store_path(directory, raw)
    try:
        fh = path.open("rb")
    except OSError as err:
        raise Refused(f"could not delete it: {err.strerror or err}") from None
    with fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise Refused(
                "this conversation is open (here or in another Neovim): "
                "`:Sightline reset` or quit that Neovim first"
            ) from None
        try:
            path.unlink()
        except OSError as err:
            raise Refused(f"could not delete it: {err.strerror or err}") from None
    names = titles(directory)
    if names.pop(path.stem, None) is not None:
        with contextlib.suppress(OSError):
            atomic_write_text(directory / TITLES, json.dumps(names, ensure_ascii=False, indent=1))


def _text(record: dict[str, Any]) -> str:
    if record.get("role") == "user" and isinstance(record.get("visible"), str):
        return str(record["visible"])
    content = record.get("content")
    if isinstance(content, str):
        return content
    parts = [b["text"] for b in content or [] if b.get("type") == "text"]
    return "\n".join(p for p in parts if p.strip())


def preview(directory: Path, raw: str) -> list[str]:
    """The last exchange of a conversation: the last prompt and the reply after it."""
    path = _store_path(directory, raw)
    messages = [r for r in history.read_records(path) if r["type"] == "message"]
    prompt = next(
        (
            i
            for i in range(len(messages) - 1, -1, -1)
            if (m := messages[i])["role"] == "user" and isinstance(m.get("visible"), str)
        ),
        None,
    )
    if prompt is None:
        return ["(no messages)"]
    asked = _text(messages[prompt]).splitlines()[:PREVIEW_LINES]
    replies = [_text(m) for m in messages[prompt + 1 :] if m["role"] == "assistant"]
    answer = "\n".join(r for r in replies if r.strip()).splitlines()[-PREVIEW_LINES:]
    lines = ["You:", *("  " + line for line in asked), ""]
    lines += ["Agent:", *("  " + line for line in answer)] if answer else ["(no reply)"]
    return lines
