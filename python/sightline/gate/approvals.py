"""Approvals the user keeps: allow or deny, for this conversation or always in this workspace.

What is remembered (and so what matches; :help sightline-approvals says the same):
- a command (run_command): allowing one remembers each of its simple commands
  (domain/shellparse.py) on its own; a later command is allowed only when every simple
  command in it was allowed. Denying one remembers the whole command as parsed (the same
  simple commands in the same order); a later command that parses the same is denied. A
  command whose simple commands cannot all be known is never remembered nor matched.
- an MCP tool: the server's name, the tool's name and a digest of the server's whole
  definition (how it is started or reached, its environment and headers) and of the tool
  as the server lists it (description, input schema, annotations): a changed server or
  tool asks again. It covers every call of that tool, whatever its arguments.
- an ACP agent's permission request (when the agent offers an "always" option): the agent,
  the kind of the call and its title, exactly.

"Always" lives in the user's data dir (`sightline/approvals/`, one file per workspace,
named by a digest of the workspace's real path), never in a file of the workspace: a
repository cannot ship, create or widen an approval. "For this conversation" lives in the
core's memory, by conversation id, and ends with the core.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sightline.domain import secrets
from sightline.domain.errors import Refused
from sightline.domain.extensions import atomic_write_text
from sightline.domain.shellparse import Parsed, Simple
from sightline.gate.decisions import SCOPES

log = logging.getLogger(__name__)

EFFECTS = ("allow", "deny")
MAX_RULES = 1000  # per workspace: a file past it is refused, not grown without end
MAX_FILE_BYTES = 4 << 20


@dataclass(frozen=True)
class Rule:
    effect: str  # "allow" | "deny"
    what: str  # "command" | "mcp" | "acp"
    key: Any  # JSON: a Simple's (allowed command), a list of them (denied), or a name list
    shown: str
    scope: str = "always"

    def to_json(self) -> dict[str, Any]:
        return {"effect": self.effect, "what": self.what, "key": self.key, "shown": self.shown}

    @classmethod
    def from_json(cls, raw: object) -> Rule | None:
        if not isinstance(raw, dict):
            return None
        effect, what, shown = raw.get("effect"), raw.get("what"), raw.get("shown")
        if effect not in EFFECTS or what not in ("command", "mcp", "acp"):
            return None
        if not isinstance(shown, str):
            return None
        key = raw.get("key")
        if what == "command":
            if effect == "allow" and Simple.from_json(key) is None:
                return None
            if effect == "deny" and not (
                isinstance(key, list) and key and all(Simple.from_json(k) for k in key)
            ):
                return None
        elif not (isinstance(key, list) and all(isinstance(k, str) for k in key)):
            return None
        return cls(str(effect), str(what), key, shown)


@dataclass(frozen=True)
class Verdict:
    effect: str
    rules: tuple[Rule, ...]  # the rules that decided it

    def shown(self) -> str:
        return ", ".join(f"`{r.shown}`" for r in self.rules)


def command_rules(effect: str, parsed: Parsed) -> list[Rule]:
    """What remembering `effect` for this parsed command stores (nothing when unknown)."""
    if parsed.unknown or not parsed.commands:
        return []
    if effect == "allow":
        unique = dict.fromkeys(parsed.commands)
        return [Rule("allow", "command", c.to_json(), c.shown()) for c in unique]
    shown = " ; ".join(c.shown() for c in parsed.commands)
    return [Rule("deny", "command", [c.to_json() for c in parsed.commands], shown)]


def digest(value: object) -> str:
    """A stable digest of a JSON-able value (a server's definition: never stored itself)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def workspace_file(directory: Path, workspace: str) -> Path:
    real = os.path.realpath(workspace)
    return (
        directory / f"{hashlib.sha256(real.encode('utf-8', 'surrogatepass')).hexdigest()[:24]}.json"
    )


class Approvals:
    """The kept approvals of every workspace: `always` on disk, `conversation` in memory."""

    def __init__(self, directory: Path):
        self.directory = directory
        self._lock = threading.Lock()
        self._conversations: dict[tuple[str, str], list[Rule]] = {}

    # -- reading ------------------------------------------------------------------------------

    def _load(self, workspace: str, strict: bool = False) -> list[Rule]:
        path = workspace_file(self.directory, workspace)
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                raise ValueError("it is larger than 4 MiB")
            data = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or not isinstance(data.get("rules"), list):
                raise ValueError("it is not an approvals file")
            if data.get("workspace") != os.path.realpath(workspace):
                raise ValueError("it belongs to another workspace")
        except FileNotFoundError:
            return []
        except (OSError, ValueError, UnicodeDecodeError, RecursionError) as err:
            if strict:
                raise Refused(f"cannot read {path}: {err}; fix or delete it") from None
            log.warning("ignoring unreadable approvals %s: %s", path, err)
            return []
        rules = [Rule.from_json(r) for r in data["rules"]]
        return [r for r in rules if r is not None]

    def rules(self, workspace: str, conversation: str | None) -> list[Rule]:
        """Every rule that applies here, numbered from 1 in this order (always, then this
        conversation's)."""
        kept = self._load(workspace)
        with self._lock:
            mine = list(self._conversations.get(self._conv_key(workspace, conversation), []))
        return kept + mine

    @staticmethod
    def _conv_key(workspace: str, conversation: str | None) -> tuple[str, str]:
        return (os.path.realpath(workspace), conversation or "")

    def check_command(
        self, workspace: str, conversation: str | None, parsed: Parsed
    ) -> Verdict | None:
        """deny when a deny rule is this command as parsed; allow when every simple command
        of it is allowed; else None (ask)."""
        if parsed.unknown or not parsed.commands:
            return None
        rules = [r for r in self.rules(workspace, conversation) if r.what == "command"]
        whole = [c.to_json() for c in parsed.commands]
        for rule in rules:
            if rule.effect == "deny" and rule.key == whole:
                return Verdict("deny", (rule,))
        allowed = {json.dumps(r.key, sort_keys=True): r for r in rules if r.effect == "allow"}
        used: dict[str, Rule] = {}
        for command in parsed.commands:
            found = allowed.get(json.dumps(command.to_json(), sort_keys=True))
            if found is None:
                return None
            used[found.shown] = found
        return Verdict("allow", tuple(used.values()))

    def check(
        self, workspace: str, conversation: str | None, what: str, key: list[str]
    ) -> Verdict | None:
        """An MCP tool's or an ACP request's rule, matched on its whole key (deny first)."""
        found = [r for r in self.rules(workspace, conversation) if r.what == what and r.key == key]
        for effect in ("deny", "allow"):
            for rule in found:
                if rule.effect == effect:
                    return Verdict(effect, (rule,))
        return None

    # -- writing ------------------------------------------------------------------------------

    def remember(
        self, workspace: str, conversation: str | None, scope: str, rules: list[Rule]
    ) -> None:
        if scope not in SCOPES:
            raise ValueError(f"scope {scope!r}")
        if not rules:
            return
        for rule in rules:
            text = json.dumps(rule.to_json(), ensure_ascii=False)
            if secrets.redact(text) != text:
                raise Refused("it holds a secret sightline redacts, which is never written down")
        if scope == "conversation":
            with self._lock:
                mine = self._conversations.setdefault(self._conv_key(workspace, conversation), [])
                for rule in rules:
                    mine[:] = [r for r in mine if not (r.what == rule.what and r.key == rule.key)]
                    mine.append(Rule(rule.effect, rule.what, rule.key, rule.shown, "conversation"))
            return
        with self._writing(workspace) as kept:
            for rule in rules:
                kept[:] = [r for r in kept if not (r.what == rule.what and r.key == rule.key)]
                kept.append(rule)
            if len(kept) > MAX_RULES:
                raise Refused(f"more than {MAX_RULES} approvals kept here: revoke some first")

    def revoke(self, workspace: str, conversation: str | None, number: int) -> Rule:
        """Revoke rule `number` of rules() (1-based)."""
        listed = self.rules(workspace, conversation)
        if not 1 <= number <= len(listed):
            if not listed:
                raise Refused("no approvals are kept for this workspace")
            raise Refused(f"approval number must be 1..{len(listed)} (got {number})")
        rule = listed[number - 1]
        if rule.scope == "conversation":
            with self._lock:
                mine = self._conversations.get(self._conv_key(workspace, conversation), [])
                mine[:] = [r for r in mine if not _same(r, rule)]
            return rule
        with self._writing(workspace) as kept:
            kept[:] = [r for r in kept if not _same(r, rule)]
        return rule

    @contextlib.contextmanager
    def _writing(self, workspace: str) -> Iterator[list[Rule]]:
        """The kept rules, changed in place, written back atomically; one writer at a time
        across Neovims (a lock file beside them)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with (
            self._lock,
            open(self.directory / ".lock", "a", encoding="utf-8") as lock,
        ):
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            kept = self._load(workspace, strict=True)
            yield kept
            data = {
                "version": 1,
                "workspace": os.path.realpath(workspace),
                "saved": int(time.time()),
                "rules": [r.to_json() for r in kept],
            }
            atomic_write_text(
                workspace_file(self.directory, workspace),
                json.dumps(data, indent=1, ensure_ascii=False) + "\n",
            )


def _same(a: Rule, b: Rule) -> bool:
    return (a.effect, a.what, a.key) == (b.effect, b.what, b.key)


def listing(rules: list[Rule]) -> list[str]:
    """`:Sightline approvals`: one line per rule, numbered as revoke takes them."""
    words = {"command": "command", "mcp": "MCP tool", "acp": "agent request"}
    scope = {"always": "always in this workspace", "conversation": "this conversation"}
    return [
        f"{n}. {r.effect} {words[r.what]} {r.shown.replace(chr(10), '⏎')} ({scope[r.scope]})"
        for n, r in enumerate(rules, 1)
    ]
