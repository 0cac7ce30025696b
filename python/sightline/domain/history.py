"""Conversations as JSONL, one file per conversation, exactly what was sent and received.

Append-only; the reader skips a torn last line (a crash mid-write). A conversation is
owned by the core that holds its lock; another Neovim opens it read-only.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import stat
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from sightline.domain import branches, secrets
from sightline.domain.wire import is_compaction

log = logging.getLogger(__name__)


# -- the validating reader -------------------------------------------------------------------
#
# A history file is data, not trusted input: an older core, a crash or a hand edit may have
# left any shape in it. Every consumer (the listing, the transcript, the request) reads
# through `check_record`, so a record is either of the shape the core writes or skipped.


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_block(block: Any) -> str | None:
    if not isinstance(block, dict) or not isinstance(block.get("type"), str):
        return "a content block is not an object with a type"
    kind = block["type"]
    if kind == "text" and not isinstance(block.get("text"), str):
        return "a text block has no text"
    if kind == "tool_use" and not (
        isinstance(block.get("id"), str) and isinstance(block.get("name"), str)
    ):
        return "a tool_use block has no id or name"
    if kind == "tool_result":
        if not isinstance(block.get("tool_use_id"), str):
            return "a tool_result block has no tool_use_id"
        content = block.get("content")
        if content is not None and not isinstance(content, str | list):
            return "a tool_result's content is neither text nor blocks"
    return None


def _check_message(record: dict[str, Any]) -> str | None:
    if record.get("role") not in ("user", "assistant"):
        return f"unknown role {record.get('role')!r}"
    content = record.get("content")
    if not isinstance(content, str | list):
        return "its content is neither text nor a list of blocks"
    if isinstance(content, list):
        for block in content:
            if why := _check_block(block):
                return why
    for key in ("visible", "note", "expanded"):
        if record.get(key) is not None and not isinstance(record[key], str):
            return f"{key} is not text"
    if record.get("chip") is not None and not isinstance(record["chip"], dict):
        return "chip is not an object"
    return None


def _check_lines(lines: Any) -> bool:
    return isinstance(lines, list) and all(
        isinstance(line, list)
        and len(line) == 2
        and isinstance(line[0], str)
        and (line[1] is None or isinstance(line[1], str))
        for line in lines
    )


def _check_steps(steps: Any) -> bool:
    return isinstance(steps, list) and all(
        isinstance(s, dict) and isinstance(s.get("text"), str) and isinstance(s.get("done"), bool)
        for s in steps
    )


def check_record(record: Any) -> str | None:
    """Why a record is not one the core writes (None when it is). Unknown record types pass:
    every reader dispatches on `type` and ignores those it does not know."""
    if not isinstance(record, dict) or not isinstance(record.get("type"), str):
        return "not an object with a type"
    kind = record["type"]
    if kind == "meta":
        if not isinstance(record.get("id"), str) or not isinstance(record.get("workspace"), str):
            return "the header has no id or workspace"
        if not _is_number(record.get("created")):
            return "the header's creation time is not a number"
    elif kind == "message":
        return _check_message(record)
    elif kind == "event":
        if not isinstance(record.get("event"), str):
            return "an event without a name"
        if record.get("text") is not None and not isinstance(record["text"], str):
            return "an event's text is not text"
    elif kind == "plan" and not _check_steps(record.get("steps")):
        return "a plan whose steps are not {text, done}"
    elif kind == "proposal" and not _check_lines(record.get("lines")):
        return "a proposal whose lines are not [text, highlight] pairs"
    elif kind == "compaction" and not is_compaction(record):
        return "a compaction without a summary or a whole number of kept records"
    elif kind == "branch":
        return branches.check_branch(record)
    elif kind in ("queued", "unqueued"):
        return branches.check_queued(record)
    return None


@dataclass
class Scan:
    """A file read through the validator: the good records and what was skipped."""

    records: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "line N: why"
    error: str | None = None  # the file could not be read at all

    @property
    def meta(self) -> dict[str, Any] | None:
        return next((r for r in self.records if r["type"] == "meta"), None)


def scan(path: Path) -> Scan:
    """Every whole, well-formed record of a file. A torn last line (a crash mid-write) or a
    line that is not JSON is skipped silently, as before; a JSON record of a wrong shape is
    skipped and named in `skipped`. Never raises."""
    out = Scan()
    try:
        with path.open(encoding="utf-8", errors="surrogateescape") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except (json.JSONDecodeError, RecursionError):
                    log.debug("skipping unreadable line %d of %s", lineno, path)
                    continue
                if why := check_record(record):
                    out.skipped.append(f"line {lineno}: {why}")
                    continue
                out.records.append(record)
    except (OSError, UnicodeError) as err:
        out.error = str(err)
    return out


def read_records(path: Path) -> Iterator[dict[str, Any]]:
    """Every whole, well-formed record of a file; torn or foreign lines are skipped."""
    yield from scan(path).records


# -- the store ---------------------------------------------------------------------------------


def store_path(directory: Path, raw: str) -> Path:
    """`raw` as a file of the history store, or ValueError saying why it is not one.

    Only the store's own files are ever opened: opening appends to the file, so any other
    path (a source file, a symlink out of the store, a FIFO) must be refused first."""
    if not raw or "\0" in raw:
        raise ValueError("not a conversation of the history store: empty path")
    try:
        store = directory.resolve()
        path = Path(raw).expanduser().resolve()
    except (OSError, RuntimeError, ValueError) as err:
        raise ValueError(f"not a conversation of the history store: {err}") from None
    if path.parent != store or path.suffix != ".jsonl":
        raise ValueError(f"not a conversation of the history store ({store}): {raw}")
    try:
        regular = stat.S_ISREG(path.stat().st_mode)
    except OSError:
        regular = False
    if not regular:  # a FIFO or device would block the core on open
        raise ValueError(f"no such conversation: {raw}")
    return path


@dataclass(frozen=True)
class Summary:
    id: str
    path: Path
    created: float
    title: str
    messages: int
    unreadable: str | None = None
    turns: int = 0  # the user's prompts on the active branch
    provider: str | None = None
    branches: list[dict[str, Any]] = field(default_factory=list)  # last used first
    used: float = 0.0  # when its file was last written

    def to_wire(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": str(self.path),
            "created": self.created,
            "used": self.used or self.created,
            "title": self.title,
            "messages": self.messages,
            "turns": self.turns,
            "provider": self.provider,
            "branches": self.branches,
            "unreadable": self.unreadable,
        }


def branch_list(tree: branches.Tree) -> list[dict[str, Any]]:
    """The branches of a conversation for the picker, the one last used first: each with
    the prompt it starts with (where it differs from its parent) and its turn count."""
    out = []
    for branch in branches.by_use(tree):
        prompts = branch.prompts()
        shared = sum(
            1
            for r in branch.records[: branch.keep]
            if r.get("type") == "message" and isinstance(r.get("visible"), str)
        )
        own = prompts[shared:]
        first = own[0].strip().splitlines()[0][:60] if own and own[0].strip() else ""
        out.append(
            {
                "id": branch.id,
                "parent": branch.parent,
                "why": branch.why,
                "turns": len(prompts),
                "first": first,
                "active": branch.id == tree.active,
            }
        )
    return out


def title_of(records: list[dict[str, Any]]) -> str:
    """A conversation's title: the first line of its first message."""
    return _title(records)


def _title(records: list[dict[str, Any]]) -> str:
    for record in records:
        if record["type"] == "message" and record.get("role") == "user":
            visible = record.get("visible")
            if isinstance(visible, str) and visible.strip():
                return visible.strip().splitlines()[0][:80]
    return "(untitled)"


def _raw_workspace(path: Path) -> str | None:
    """The workspace a file names in its first line, even if that header is damaged."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            first = json.loads(fh.readline() or "null")
    except (OSError, ValueError, RecursionError):
        return None
    ws = first.get("workspace") if isinstance(first, dict) else None
    return ws if isinstance(ws, str) else None


def list_conversations(directory: Path, workspace: str) -> list[Summary]:
    """This workspace's conversations, the one last used first (by the time its file was
    last written: a conversation continued today comes before one started yesterday). A
    file that cannot be read is listed as unreadable (when it names this workspace), never
    breaks the listing of the others."""
    found: list[tuple[float, Summary]] = []
    if not directory.is_dir():
        return []
    for path in directory.glob("*.jsonl"):
        try:
            summary = _summary(path, workspace)
            used = path.stat().st_mtime if summary is not None else 0.0
        except Exception as err:  # one bad file never hides the others
            log.warning("cannot list %s: %s", path, err)
            summary = None
        if summary is not None:
            found.append((max(used, summary.created), summary))
    found.sort(key=lambda item: item[0], reverse=True)
    return [summary for _, summary in found]


def _summary(path: Path, workspace: str) -> Summary | None:
    if not path.is_file():
        return None
    got = scan(path)
    meta = got.meta
    if meta is None or got.error:
        if got.error is None and _raw_workspace(path) != workspace:
            return None
        why = got.error or (got.skipped[0] if got.skipped else "no header")
        mtime = path.stat().st_mtime
        return Summary(path.stem, path, mtime, f"(unreadable: {why})", 0, why)
    if meta["workspace"] != workspace:
        return None
    count = sum(1 for r in got.records if r["type"] == "message")
    tree = branches.Tree.of(got.records)
    # A conversation whose only message never reached the model (Neovim quit while the
    # key was fetched) is listed too: reopening it puts the message back into the composer.
    if not count and not tree.queued:
        return None
    provider = meta.get("provider")
    title = _title(tree.records)
    if not count:
        first = next(iter(tree.queued.values())).strip()
        title = f"(not sent) {first.splitlines()[0][:80]}" if first else title
    return Summary(
        meta["id"],
        path,
        float(meta["created"]),
        title,
        count,
        turns=len(tree.branches[tree.active].prompts()),
        provider=provider if isinstance(provider, str) else None,
        branches=branch_list(tree) if len(tree.branches) > 1 else [],
        used=path.stat().st_mtime,
    )


@dataclass
class Conversation:
    """One conversation's file. Records are appended and flushed as they happen.

    `records` are the active branch's (domain/branches.py); `log` is the whole file."""

    path: Path
    id: str
    workspace: str
    read_only: bool = False
    records: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    log: list[dict[str, Any]] = field(default_factory=list)
    tree: branches.Tree = field(default_factory=branches.Tree)
    _fh: TextIO | None = None
    # A turn's worker and Neovim's requests (a queued message) append at once: the file
    # and the branches must see the records in one order.
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.records and not self.log:  # made from records (tests, a fork's copy)
            self.log = list(self.records)
            self.tree = branches.Tree.of(self.log)
        self.records = self.tree.records

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
        """Open a store file for continuing it; ValueError when it cannot be read (nothing is
        written then). Records of a wrong shape are skipped and named in `skipped`."""
        got = scan(path)
        meta = got.meta
        if got.error or meta is None:
            why = got.error or (got.skipped[0] if got.skipped else "no header")
            raise ValueError(f"the conversation file is unreadable ({why})")
        conv = cls(path, meta["id"], meta["workspace"], log=got.records)
        conv.tree = branches.Tree.of(got.records)
        conv.records = conv.tree.records
        conv.skipped = got.skipped
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
        with self._lock:
            self.log.append(record)
            self.tree.add(record)
            self.records = self.tree.records  # a branch record makes another one active
            if self._fh is None:
                return
            line = secrets.redact(_dumps(record))
            self._fh.write(line + "\n")
            self._fh.flush()
            os.fsync(self._fh.fileno())

    def messages(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("type") == "message"]

    # -- branches (domain/branches.py) ----------------------------------------------------

    @property
    def branch(self) -> str:
        """The active branch's id."""
        return self.tree.active

    def fork(self, keep: int, why: str) -> str:
        """Start a branch holding the active branch's first `keep` records; it becomes the
        active one (the earlier branch stays in the file as it was). Returns its id."""
        keep = max(0, min(keep, len(self.records)))
        bid = self.tree.next_id()
        record = {
            "type": "branch",
            "id": bid,
            "parent": self.tree.active,
            "keep": keep,
            "why": why,
            "created": time.time(),
        }
        self.append(record)
        return bid

    def switch(self, bid: str) -> None:
        """Make an existing branch the active one (what follows is appended to it)."""
        if bid not in self.tree.branches:
            raise ValueError(f"no branch {bid!r} in this conversation")
        if bid != self.tree.active:
            self.append({"type": "branch", "id": bid})

    def queue(self, text: str) -> int:
        """Record a message typed while a turn ran ("queued, not sent"); returns its id."""
        qid = self.tree.next_queued()
        self.append({"type": "queued", "id": qid, "text": text})
        return qid

    def unqueue(self, qid: int, how: str) -> None:
        if qid in self.tree.queued:
            self.append({"type": "unqueued", "id": qid, "how": how})

    def close(self) -> None:
        with self._lock:  # never under a record being written (a stopped turn's worker)
            if self._fh is not None:
                self._fh.close()
                self._fh = None


def _dumps(record: dict[str, Any]) -> str:
    """One JSON line. Lone surrogates (pynvim's escapes of bytes that are not UTF-8) are
    written as JSON escapes: the file stays UTF-8 and they read back exactly."""
    line = json.dumps(record, ensure_ascii=False)
    if line.isascii():
        return line
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", line)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _ends_with_newline(path: Path) -> bool:
    with path.open("rb") as fh:
        fh.seek(0, os.SEEK_END)
        if fh.tell() == 0:
            return True
        fh.seek(-1, os.SEEK_END)
        return fh.read(1) == b"\n"
