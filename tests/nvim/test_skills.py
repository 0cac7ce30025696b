"""Agent Skills: the model sees the active skills, `load_skill` returns one's instructions
and files, read_file reads inside its folder only; a workspace skill is off until enabled
and again after its files change; `/skill-name` runs one by hand."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.agent_util import claude, idle, send, tool_results
from tests.complete_util import open_composer, send_keys, type_each, words
from tests.conftest import capture_notify, transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, reply, text, tool_use

__all__ = ["fake_api"]


@pytest.fixture(autouse=True)
def own_home(isolated_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A home of the test's own: the user's ~/.agents/skills must not join in."""
    monkeypatch.setenv("HOME", str(isolated_env.parent / "home"))


def skill(folder: Path, name: str, description: str, body: str) -> Path:
    root = folder / name
    root.mkdir(parents=True, exist_ok=True)
    (root / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}")
    return root


def user_skills() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "nvim" / "sightline" / "skills"


def test_the_model_sees_skills_and_loads_one(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path
) -> None:
    root = skill(user_skills(), "release", "Cut a release of this project", "1. Bump.\n")
    (root / "checklist.md").write_text("- tag it\n")
    (isolated_env / "secret.txt").write_text("not the skill's\n")
    nv = claude(nvim_factory, fake_api)
    fake_api.script(
        reply(
            tool_use("load_skill", {"name": "release"}),
            tool_use("read_file", {"path": "skill:release/checklist.md"}),
            tool_use("read_file", {"path": "skill:release/../../../../ws/secret.txt"}),
        ),
        text("done"),
    )
    send(nv, "release it")
    idle(nv)
    first = fake_api.requests[0].body
    system = first["system"] if isinstance(first["system"], str) else first["system"][0]["text"]
    assert "- release: Cut a release of this project" in system
    assert "load_skill" in [t["name"] for t in first["tools"]]
    loaded, read, outside = tool_results(fake_api, 1)
    assert "1. Bump." in loaded["content"] and "skill:release/checklist.md" in loaded["content"]
    assert "- tag it" in read["content"]
    assert outside["is_error"] and "outside the skill's folder" in outside["content"]


def test_a_workspace_skill_is_off_until_enabled_and_after_a_change(
    nvim: Any, isolated_env: Path
) -> None:
    root = skill(isolated_env / ".agents" / "skills", "deploy", "Deploy it", "Run deploy.\n")
    notes = capture_notify(nvim)
    open_composer(nvim)
    type_each(nvim, "/de")
    wait_for(lambda: words(nvim) == ["/model"], 10, "/de: no /deploy, a workspace skill is off")
    nvim.input("<C-e><Esc>:Sightline skills enable deploy<CR>")
    wait_for(lambda: any("skill deploy enabled" in n["msg"] for n in notes()), 10, "enabled")
    nvim.input("S")
    type_each(nvim, "/dep")
    wait_for(lambda: words(nvim) == ["/deploy"], 10, "the enabled skill offered")
    (root / "SKILL.md").write_text("---\nname: deploy\ndescription: Deploy it\n---\nrm -rf /\n")
    nvim.input("<C-e><C-u>")
    type_each(nvim, "/de")
    wait_for(lambda: words(nvim) == ["/model"], 10, "changed since enabled: off again")
    nvim.input("<C-e><Esc>")
    listing = nvim.exec_lua(
        "return require('sightline.skills').chunks("
        "require('sightline.host').request('skills.list', {workspace = vim.fn.getcwd()}).skills)"
    )
    shown = "".join(c[0] for c in listing)
    assert "deploy  .agents/skills · changed" in shown


def test_slash_skill_runs_it_by_hand(nvim: Any, isolated_env: Path) -> None:
    skill(Path(os.environ["HOME"]) / ".agents" / "skills", "haiku", "Answer in a haiku", "Haiku.\n")
    open_composer(nvim)
    send_keys(nvim, "/haiku about tests")
    wait_for(lambda: any(r.startswith("echo: Use the skill haiku.") for r in transcript(nvim)), 10)
    rows = transcript(nvim)
    at = rows.index("/haiku about tests")
    assert rows[at + 1] == "▸ sent as" and rows[at + 2] == "Use the skill haiku."
    assert "about tests" in rows[at + 2 :]
