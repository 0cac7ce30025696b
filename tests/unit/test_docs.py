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


# The README's layout and contributor sections: what they name exists, and every room of the
# code is in the layout (a moved or new module cannot leave the table stale).

README = ROOT / "README.md"


def readme_section(title: str) -> str:
    text = README.read_text()
    start = text.index(f"\n## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def test_every_path_the_readme_layout_and_contributor_note_name_exists() -> None:
    text = readme_section("Layout") + readme_section("Contributing")
    folders = [ROOT, ROOT / "python" / "sightline", ROOT / "lua" / "sightline"]
    folders += [d for top in folders[1:] for d in top.rglob("*") if d.is_dir()]
    named = [
        name
        for name in re.findall(r"`([^`\s]+)`", text)
        if ("/" in name or re.search(r"\.(py|lua|scm|txt)$", name))
        and not re.search(r"[{}*]", name)
    ]
    assert len(named) > 40
    assert [n for n in named if not any((f / n).exists() for f in folders)] == []


def test_the_readme_layout_names_every_room() -> None:
    rows = {
        row.split("|")[1].strip(): row.split("|")[2]
        for row in readme_section("Layout").splitlines()
        if row.startswith("| `")
    }
    package = ROOT / "python" / "sightline"
    rooms = sorted(p.name for p in package.iterdir() if (p / "__init__.py").exists())
    assert [r for r in rooms if not any(f"{r}/`" in key for key in rows)] == []
    assert "`python/sightline/core.py`" in rows

    def modules(folder: str, ext: str) -> set[str]:
        return {p.stem for p in (ROOT / folder).glob(f"*.{ext}")} - {"__init__"}

    def row(key: str) -> str:
        return next(text for k, text in rows.items() if key in k)

    for folder, key, ext in [
        ("lua/sightline/ui/pane", "`lua/sightline/ui/pane/`", "lua"),
        ("lua/sightline/ui", "`lua/sightline/ui/`", "lua"),
        ("python/sightline/agent", "`python/sightline/agent/`", "py"),
    ]:
        said = set(re.findall(r"`(\w+)`", row(key)))
        assert modules(folder, ext) - said - {"init"} == set(), folder
