""":Sightline extension list|install|uninstall|enable|disable, its completion, and
require('sightline').extensions(), in real Neovim."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.conftest import capture_notify, said
from tests.extensions_util import make_extension


def listing(nv: Any) -> list[str]:
    out = nv.api.exec2("Sightline extensions", {"output": True})["output"]
    return [line.rstrip() for line in str(out).splitlines()]


def complete(nv: Any, cmdline: str) -> list[str]:
    return list(nv.call("getcompletion", cmdline, "cmdline"))


def test_install_disable_enable_uninstall(nvim: Any, isolated_env: Path, tmp_path: Path) -> None:
    notes = capture_notify(nvim)
    src = make_extension(tmp_path / "src dir", "foo", "Helps with foo")
    assert listing(nvim) == ["No extensions. Install one with: :Sightline extension install PATH"]
    escaped = str(src).replace(" ", "\\ ")
    nvim.command(f"Sightline extension install {escaped}")
    installed = Path(os.environ["XDG_DATA_HOME"]) / "sightline" / "extensions" / "foo"
    assert said(nvim, notes()[-1]["msg"]) == f"Installed foo 1.0.0 in {installed}"
    assert listing(nvim) == [
        "NAME  VERSION  STATE   SOURCE  DESCRIPTION",
        "foo   1.0.0    active  user    Helps with foo",
    ]
    nvim.command("Sightline extension disable foo")
    assert notes()[-1]["msg"] == "Disabled foo for you (all workspaces)"
    assert listing(nvim)[1].split()[:3] == ["foo", "1.0.0", "disabled"]
    nvim.command("Sightline extension enable foo --workspace")
    assert said(nvim, notes()[-1]["msg"]) == f"Enabled foo for workspace {isolated_env}"
    assert listing(nvim)[1].split()[:3] == ["foo", "1.0.0", "active"]
    nvim.command("Sightline extension uninstall foo")
    assert said(nvim, notes()[-1]["msg"]) == f"Uninstalled foo ({installed})"
    assert not installed.exists()
    nvim.command("Sightline extension uninstall foo")
    assert notes()[-1] == {"msg": "foo is not installed", "level": 3}


def test_list_shows_errors_and_the_workspace_hint(nvim: Any, isolated_env: Path) -> None:
    carried = isolated_env / ".sightline" / "extensions"
    make_extension(carried, "repo-tool", "Repo tool")
    (carried / "broken").mkdir()
    (carried / "broken" / "sightline-extension.json").write_text("{ nope")
    lines = listing(nvim)
    assert lines[1].startswith(
        "broken     -        error     workspace  error: sightline-extension"
    )
    assert lines[2].split()[:4] == ["repo-tool", "1.0.0", "disabled", "workspace"]
    assert lines[-1] == "  :Sightline extension enable NAME --workspace"
    statuses = nvim.exec_lua("return require('sightline').extensions()")
    assert [s["name"] for s in statuses] == ["broken", "repo-tool"]
    assert "description" not in statuses[0] and statuses[1]["description"] == "Repo tool"
    assert statuses[1]["active"] is False and statuses[0]["error"]


def test_user_errors_are_one_message(nvim: Any, tmp_path: Path) -> None:
    notes = capture_notify(nvim)
    for command, expected in [
        ("extension install", "usage: :Sightline extension install {path} [--force]"),
        (f"extension install {tmp_path / 'none'}", "not a folder"),
        ("extension enable", "usage: :Sightline extension enable {name} [--workspace]"),
        ("extension enable ../x", "invalid name '../x'"),
        ("extension frobnicate", 'unknown extension command "frobnicate"'),
    ]:
        nvim.command(f"Sightline {command}")
        assert expected in said(nvim, notes()[-1]["msg"]), command
        assert notes()[-1]["level"] == 3


def test_completion(nvim: Any, isolated_env: Path, tmp_path: Path) -> None:
    nvim.exec_lua(
        "require('sightline.extensions').command({'install', ...})",
        str(make_extension(tmp_path / "src", "foo")),
    )
    make_extension(isolated_env / ".sightline" / "extensions", "bar")
    (isolated_env / "exts").mkdir()
    assert "extension" in complete(nvim, "Sightline ext")
    assert "extensions" in complete(nvim, "Sightline ext")
    assert complete(nvim, "Sightline extension ") == [
        "list", "install", "uninstall", "enable", "disable",
    ]  # fmt: skip
    assert complete(nvim, "Sightline extensions en") == ["enable"]
    assert complete(nvim, "Sightline extension install ex") == ["exts/"]
    assert complete(nvim, "Sightline extension install --f") == ["--force"]
    assert complete(nvim, "Sightline extension enable ") == ["foo", "bar"]
    assert complete(nvim, "Sightline extension disable f") == ["foo"]
    assert complete(nvim, "Sightline extension enable bar ") == ["--workspace"]
    assert complete(nvim, "Sightline extension uninstall ") == ["foo"]  # installed ones only


def test_a_manifest_nested_50000_deep_is_reported_and_the_others_work(
    nvim_factory: Any, screen_factory: Any, isolated_env: Path
) -> None:
    """Issue 10 §6: it broke the listing and every @ext send with a RecursionError, even
    while disabled. Now it is listed with its error and skipped; `@ext:good` still works."""
    import json

    from tests.conftest import transcript, wait_for, wait_idle

    user = Path(os.environ["XDG_DATA_HOME"]) / "sightline" / "extensions"
    make_extension(user, "good", "Good helper")
    deep = make_extension(user, "deep", "Deep one")
    (deep / "sightline-extension.json").write_text("[" * 50_000 + "]" * 50_000)
    nv = nvim_factory({"provider": {"name": "echo"}})
    screen = screen_factory(nv, 120, 30)
    nv.command("Sightline extension disable deep")  # broken even while disabled
    nv.input(":Sightline extensions<CR>")
    screen.wait_text("error: sightline-extension.json is nested deeper than 32 levels")
    rows = [line.rstrip() for line in screen.lines()]
    assert any(r.split()[:4] == ["good", "1.0.0", "active", "user"] for r in rows), rows
    assert any(r.split()[:4] == ["deep", "-", "error", "user"] for r in rows), rows
    shown = "\n".join(rows)
    assert "Traceback" not in shown and "RecursionError" not in shown and "E5108" not in shown
    nv.input("<CR>")
    nv.command("Sightline chat")
    assert nv.exec_lua("return {require('sightline').send('@ext:good @ext:deep hi')}") == [True]
    wait_for(lambda: "echo: @ext:good @ext:deep hi" in transcript(nv), 10, "the echo")
    wait_idle(nv)
    path = Path(nv.exec_lua("return require('sightline.host').status().conversation_path"))
    user_record = [json.loads(r) for r in path.read_text().splitlines()][1]
    parts = [c["text"] for c in user_record["content"]]
    assert parts[0] == "@ext:good @ext:deep hi"
    assert any("good knows things." in p for p in parts[1:]), parts
    assert not any("deep" in p for p in parts[1:]), parts
    screen.wait_text("echo: @ext:good @ext:deep hi")
    assert "Traceback" not in screen.text() and "internal error" not in screen.text()
