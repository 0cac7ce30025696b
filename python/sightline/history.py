"""Conversations as JSONL, one file per conversation, exactly what was sent and received.

Append-only; the reader skips a torn last line (a crash mid-write). A conversation is
owned by the core that holds its lock; another Neovim opens it read-only.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from sightline import secrets

log = logging.getLogger(__name__)


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """Every whole record of a file; torn or foreign lines are skipped, never fatal."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    log.debug("skipping unreadable line %d of %s", lineno, path)
                    continue
                if isinstance(record, dict):
                    yield record
    except OSError as err:
        log.debug("cannot read %s: %s", path, err)


@dataclass(frozen=True)
class Summary:
    id: str
    path: Path
    created: float
    title: str
    messages: int

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": str(self.path),
            "created": self.created,
            "title": self.title,
            "messages": self.messages,
        }


def list_conversations(directory: Path, workspace: str) -> list[Summary]:
    """This workspace's conversations, newest first."""
    found: list[Summary] = []
    if not directory.is_dir():
        return found
    for path in directory.glob("*.jsonl"):
        meta: dict[str, Any] | None = None
        title, count = "", 0
        for record in read_records(path):
            if record.get("type") == "meta":
                meta = record
            elif record.get("type") == "message":
                count += 1
                if not title and record.get("role") == "user" and record.get("visible"):
                    title = str(record["visible"]).strip().splitlines()[0][:80]
        if meta and meta.get("workspace") == workspace and count:
            created = float(meta.get("created", 0))
            found.append(Summary(str(meta.get("id")), path, created, title or "(untitled)", count))
    found.sort(key=lambda s: s.created, reverse=True)
    return found


@dataclass
class Conversation:
    """One conversation's file. Records are appended and flushed as they happen."""

    path: Path
    id: str
    workspace: str
    read_only: bool = False
    records: list[dict[str, Any]] = field(default_factory=list)
    _fh: TextIO | None = None

    @classmethod
    def create(cls, directory: Path, workspace: str, **meta: Any) -> Conversation:
        directory.mkdir(parents=True, exist_ok=True)
        conv_id = time.strftime("%Y%m%d-%H%M%S") + "-" + uuid.uuid4().hex[:8]
        conv = cls(directory / f"{conv_id}.jsonl", conv_id, workspace)
        conv._open()
        record = {"type": "meta", "id": conv_id, "workspace": workspace, "created": time.time()}
        conv.append({**record, **meta})
        return conv

    @classmethod
    def load(cls, path: Path) -> Conversation:
        records = list(read_records(path))
        meta = next((r for r in records if r.get("type") == "meta"), {})
        conv = cls(path, str(meta.get("id", path.stem)), str(meta.get("workspace", "")))
        conv.records = records
        conv._open()
        return conv

    def _open(self) -> None:
        fh = self.path.open("a", encoding="utf-8")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            # Another core owns it: keep it readable, never write to it.
            fh.close()
            self.read_only = True
            return
        self._fh = fh
        # A torn last line (crash mid-write) must not swallow the next record.
        if not _ends_with_newline(self.path):
            fh.write("\n")
            fh.flush()

    def append(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        if self._fh is None:
            return
        line = secrets.redact(json.dumps(record, ensure_ascii=False))
        self._fh.write(line + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def messages(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("type") == "message"]

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return True
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"
