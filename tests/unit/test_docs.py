"""The help file: :helptags raises no error, every |link| resolves, public names have tags."""

from __future__ import annotations

import re

from tests.conftest import ROOT
from tests.docs_util import DOC, section


def test_every_public_name_has_a_tag() -> None:
    text = DOC.read_text()
    tags = set(re.findall(r"\*([^*\s]+)\*", text))
    subcommands = ["chat", "stop", "reset", "restart", "history", "plan", "autoaccept"]
    subcommands += ["accept", "reject", "extensions", "extension"]
    functions = ["setup", "chat", "send", "stop", "reset", "decide", "status", "plan"]
    functions += ["extensions"]
    expected = {f":Sightline-{s}" for s in subcommands} | {f"sightline.{f}()" for f in functions}
    expected |= {"SightlineTurnStart", "SightlineTurnEnd", "<Plug>(sightline-chat)"}
    expected |= {"<Plug>(sightline-change)", "SightlineUser", "SightlineError", "g:sightline"}
    expected |= {"sightline-mentions", "sightline-extensions", "sightline-completion"}
    expected |= {"sightline-cli"}
    assert expected - tags == set()


# The options, highlight groups and events sections checked against what the code defines,
# so the help cannot drift from the schema and the tables.


def fired_events() -> set[str]:
    """User events the code fires: the core's ui.event(...) and Lua's nvim_exec_autocmds."""
    names: set[str] = set()
    for f in (ROOT / "python").rglob("*.py"):
        names |= set(re.findall(r"\.event\(\s*\"(Sightline\w+)\"", f.read_text()))
    for f in (ROOT / "lua").rglob("*.lua"):
        found = re.findall(
            r"nvim_exec_autocmds\(\s*'User',\s*\{\s*pattern = '(Sightline\w+)'", f.read_text()
        )
        names |= set(found)
    return names


def test_every_event_is_documented() -> None:
    text = DOC.read_text()
    events = fired_events()
    assert {"SightlineTurnStart", "SightlineTurnEnd", "SightlineProposal"} <= events
    listed = section(text, "sightline-events")
    for event in sorted(events):
        assert f"*{event}*" in text, f"event {event} has no help tag"
        assert f"*{event}*" in listed or f"|{event}|" in listed, f"{event} missing from 7."
    documented = set(re.findall(r"\*(Sightline[A-Z]\w*)\*", listed))
    assert documented <= events, f"documented events nobody fires: {documented - events}"


def test_luacats_classes_are_declared_once() -> None:
    """One name, one meaning: a class declared in two files is two types under one name."""
    seen: dict[str, list[str]] = {}
    for f in sorted((ROOT / "lua").rglob("*.lua")):
        for name in re.findall(r"^---@class\s+([\w.]+)", f.read_text(), re.M):
            seen.setdefault(name, []).append(str(f.relative_to(ROOT)))
    assert len(seen) > 10
    assert {n: fs for n, fs in seen.items() if len(fs) > 1} == {}
