"""Rules files and prices: the pure parts (the end-to-end path is in test_openai_nvim.py)."""

from __future__ import annotations

import os
from pathlib import Path

from sightline.agent.prompt import (
    RULES_MAX_FILE_BYTES,
    RULES_MAX_TOTAL_BYTES,
    RulesFile,
    load_rules,
    system_prompt,
)
from sightline.domain import narrator, pricing, secrets


def test_rules_are_bounded_per_file_and_in_total(tmp_path: Path) -> None:
    for name in ("AGENTS.md", "CLAUDE.md"):
        (tmp_path / name).write_text("x" * (RULES_MAX_FILE_BYTES * 2))
    (tmp_path / ".sightline").mkdir()
    (tmp_path / ".sightline" / "rules.md").write_text("late")
    rules = load_rules(str(tmp_path))
    assert [r.path for r in rules] == ["AGENTS.md", "CLAUDE.md"]  # the budget is spent
    assert all(r.cut and len(r.text) == RULES_MAX_FILE_BYTES for r in rules)
    assert sum(len(r.text) for r in rules) <= RULES_MAX_TOTAL_BYTES
    assert "is longer than this" in system_prompt(str(tmp_path), "normal", False, rules)


def test_rules_outside_the_root_are_skipped_and_keys_redacted(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "secret.md").write_text("outside")
    (ws / "AGENTS.md").symlink_to(tmp_path / "secret.md")
    secrets.register("sk-rules-9999")
    (ws / "CLAUDE.md").write_text("key sk-rules-9999")
    assert [(r.path, r.text) for r in load_rules(str(ws))] == [("CLAUDE.md", "key [REDACTED]")]


def test_prices_match_families_vendors_and_overrides() -> None:
    assert pricing.price_of("claude-sonnet-5-5") == pricing.PRICES["claude-sonnet"]
    assert pricing.price_of("openai/gpt-4.1-mini") == pricing.PRICES["gpt-4.1-mini"]
    assert pricing.price_of("mystery") is None
    assert pricing.price_of("mystery", {"mystery": {"input": 1.0}}) == {"input": 1.0}
    cost = pricing.cost(pricing.Tokens(1_000_000, 1_000_000, 1_000_000), {"input": 2, "output": 8})
    assert cost == 2 + 8 + 2  # cache reads fall back to the input price


def shown(rules: list[RulesFile]) -> str:
    """The rules line of the transcript, as the loop words it."""
    used = [r.path for r in rules if r.refused is None]
    left_out = [f"{r.path} ({r.refused})" for r in rules if r.refused is not None]
    return narrator.rules(used, [r.path for r in rules if r.cut], 16, left_out).text


def test_rules_files_are_read_as_the_read_tools_read(tmp_path: Path) -> None:
    # Issue 20 §10: a binary CLAUDE.md went into the system prompt.
    (tmp_path / "CLAUDE.md").write_bytes(b"\x7fELF\x02\x01\x00\x00binary")
    (tmp_path / "AGENTS.md").write_text("be kind")
    (tmp_path / ".sightline").mkdir()
    os.mkfifo(tmp_path / ".sightline" / "rules.md")  # must not wait for a writer
    rules = load_rules(str(tmp_path))
    assert [(r.path, r.refused) for r in rules] == [
        ("AGENTS.md", None),
        ("CLAUDE.md", "a binary file; not shown"),
    ]
    prompt = system_prompt(str(tmp_path), "normal", False, rules)
    assert "be kind" in prompt and "ELF" not in prompt and "CLAUDE.md" not in prompt
    assert shown(rules) == "rules: @AGENTS.md; left out: CLAUDE.md (a binary file; not shown)"


def test_only_refused_rules_give_no_rules_section(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_bytes(b"\0\0\0")
    rules = load_rules(str(tmp_path))
    assert "rules files follow" not in system_prompt(str(tmp_path), "normal", False, rules)
    assert shown(rules) == "rules: none; left out: AGENTS.md (a binary file; not shown)"
