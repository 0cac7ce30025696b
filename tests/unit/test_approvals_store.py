"""gate/approvals.py: the kept rules on disk and in memory, numbered as :Sightline approvals
lists them, and a file that is not this workspace's own never counted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sightline.domain import secrets
from sightline.domain.errors import Refused
from sightline.domain.shellparse import parse
from sightline.gate.approvals import Approvals, Rule, command_rules, listing, workspace_file


def allow(store: Approvals, ws: str, conv: str | None, scope: str, line: str) -> None:
    store.remember(ws, conv, scope, command_rules("allow", parse(line)))


def test_always_then_this_conversations_numbered_and_revoked_by_number(tmp_path: Path) -> None:
    store = Approvals(tmp_path / "kept")
    ws = str(tmp_path)
    allow(store, ws, "c1", "always", "npm test && npm run lint")
    allow(store, ws, "c1", "conversation", "make")
    store.remember(ws, "c1", "always", [Rule("allow", "mcp", ["fs", "read", "d1"], "fs/read")])
    assert listing(store.rules(ws, "c1")) == [
        "1. allow command npm test (always in this workspace)",
        "2. allow command npm run lint (always in this workspace)",
        "3. allow MCP tool fs/read (always in this workspace)",
        "4. allow command make (this conversation)",
    ]
    assert listing(store.rules(ws, "c2")) == listing(store.rules(ws, "c1"))[:3]
    assert store.revoke(ws, "c1", 4).shown == "make"
    assert store.revoke(ws, "c1", 1).shown == "npm test"
    assert [r.shown for r in Approvals(tmp_path / "kept").rules(ws, None)] == [
        "npm run lint",
        "fs/read",
    ]
    with pytest.raises(Refused, match=r"1\.\.2 \(got 7\)"):
        store.revoke(ws, None, 7)


def test_the_opposite_decision_replaces_the_kept_one(tmp_path: Path) -> None:
    store = Approvals(tmp_path)
    rule = Rule("allow", "acp", ["a", "execute", "Run make"], "Run make")
    store.remember("/w", None, "always", [rule])
    store.remember("/w", None, "always", [Rule("deny", "acp", rule.key, "Run make")])
    verdict = store.check("/w", None, "acp", rule.key)
    assert verdict is not None and verdict.effect == "deny" and len(store.rules("/w", None)) == 1


def test_a_file_of_another_workspace_copied_into_place_counts_for_nothing(tmp_path: Path) -> None:
    store = Approvals(tmp_path / "kept")
    allow(store, "/elsewhere", None, "always", "rm -rf build")
    mine = workspace_file(tmp_path / "kept", str(tmp_path))
    shutil.copy(workspace_file(tmp_path / "kept", "/elsewhere"), mine)
    assert store.check_command(str(tmp_path), None, parse("rm -rf build")) is None
    assert store.rules(str(tmp_path), None) == []


def test_a_broken_file_is_ignored_when_read_and_named_when_written(tmp_path: Path) -> None:
    store = Approvals(tmp_path)
    path = workspace_file(tmp_path, "/w")
    path.write_text("{not json")
    assert store.check_command("/w", None, parse("ls")) is None
    with pytest.raises(Refused, match="fix or delete it"):
        allow(store, "/w", None, "always", "ls")
    assert path.read_text() == "{not json"  # never overwritten
    path.write_text(json.dumps({"workspace": "/w", "rules": [{"effect": "allow"}, 3]}))
    assert store.rules("/w", None) == []  # rules of a wrong shape are skipped


def test_a_command_holding_a_secret_is_never_written_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The process's registry, for this test only: the provider's key, as the core registers.
    monkeypatch.setattr(secrets, "_secrets", ("sk-approvals-test-secret-123",))
    store = Approvals(tmp_path)
    with pytest.raises(Refused, match="secret"):
        allow(store, "/w", None, "always", "curl -H sk-approvals-test-secret-123 x")
    assert list(tmp_path.iterdir()) == [] and store.rules("/w", None) == []
