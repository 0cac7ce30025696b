"""domain/sandbox.py without Neovim: the bwrap command line it builds for each layout of
workspace and $HOME, its config's shapes, and which rule a failure's output points at
(the sandbox itself, run for real, is tested in tests/nvim/test_sandbox.py)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from sightline.domain import sandbox
from sightline.domain.mcp_config import ServerConfig
from sightline.mcp_client.manager import Manager, Server

ON = sandbox.Status(True, "", "/usr/bin/bwrap")


def test_the_config_takes_auto_off_and_a_table_of_rules() -> None:
    assert sandbox.SandboxConfig.from_value("auto") == sandbox.SandboxConfig()
    assert sandbox.SandboxConfig.from_value("off").mode == "off"
    assert sandbox.SandboxConfig.from_value([]) == sandbox.SandboxConfig()
    rules = sandbox.SandboxConfig.from_value({"network": True, "home": ["~/.cargo"]})
    assert rules.network and rules.home == ("~/.cargo",) and rules.mode == "auto"
    with pytest.raises(ValueError, match=r"tools\.sandbox\.network"):
        sandbox.SandboxConfig.from_value({"network": "yes"})


def test_home_is_hidden_and_read_only_and_the_workspace_inside_it_writable(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".cargo").mkdir(parents=True)
    ws = home / "src" / "app"
    ws.mkdir(parents=True)
    cfg = sandbox.SandboxConfig(home=("~/.cargo", "~/.absent"))
    argv = sandbox.wrap(["/bin/sh", "-c", "x"], str(ws), cfg, ON, home=str(home))
    h, w = str(home.resolve()), str(ws.resolve())
    assert argv[:3] == ["/usr/bin/bwrap", "--ro-bind", "/"]
    at = {a: i for i, a in enumerate(argv)}
    tmpfs_home = argv.index(h) - 1
    assert argv[tmpfs_home] == "--tmpfs"
    assert argv.index(f"{h}/.cargo") > tmpfs_home and f"{h}/.absent" not in argv
    assert argv[at["--remount-ro"] + 1] == h and at["--remount-ro"] > argv.index(w)
    assert "--unshare-net" in argv and argv[-4:] == ["--", "/bin/sh", "-c", "x"]


@pytest.mark.parametrize("ws", ["home", "root"])
def test_a_workspace_that_holds_home_shows_it(tmp_path: Path, ws: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    where = home if ws == "home" else tmp_path
    argv = sandbox.wrap(["true"], str(where), sandbox.SandboxConfig(), ON, home=str(home))
    pairs = list(itertools.pairwise(argv))
    assert ("--tmpfs", str(home.resolve())) not in pairs and "--remount-ro" not in argv
    assert ("--bind", str(where.resolve())) in pairs


def test_network_allowed_keeps_the_network_and_off_runs_it_bare() -> None:
    argv = sandbox.wrap(["true"], "/tmp", sandbox.SandboxConfig(network=True), ON, home="/h")
    assert "--unshare-net" not in argv
    off = sandbox.Status(False, "tools.sandbox is 'off'")
    assert sandbox.wrap(["true"], "/tmp", sandbox.SandboxConfig(), off) == ["true"]


def test_without_bwrap_on_path_it_says_so(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    status = sandbox.probe(sandbox.SandboxConfig(), {"PATH": str(tmp_path)})
    assert not status.sandboxed and status.why == "bubblewrap (bwrap) was not found on $PATH"
    assert sandbox.described(sandbox.SandboxConfig(), status).startswith("runs unsandboxed: ")
    assert sandbox.probe(sandbox.SandboxConfig(mode="off")).why == "tools.sandbox is 'off'"


def test_a_failure_names_the_rule_its_output_points_at() -> None:
    cfg = sandbox.SandboxConfig()
    said = "\n".join(
        [
            "sh: 1: cannot create /etc/x: Read-only file system",
            "touch: cannot touch '/h/y': Read-only file system",
            "cat: /h/.ssh/id: No such file or directory",
            "curl: (6) Could not resolve host: example.org",
        ]
    )
    rules = sandbox.refused_by(said, cfg, home="/h")
    assert [r.split(" ")[0:3] for r in rules] == [
        ["only", "the", "workspace"],
        ["$HOME", "is", "hidden"],
        ["$HOME", "is", "hidden"],
        ["the", "sandbox", "has"],
    ]
    assert sandbox.refused_by("make: *** [test] Error 1", cfg, home="/h") == []
    assert sandbox.refused_by("Could not resolve host", sandbox.SandboxConfig(network=True)) == []


def test_an_mcp_server_that_must_be_sandboxed_does_not_start_without_one(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    manager = Manager(lambda note: None)
    manager.configure((), 1000, 1000, sandbox.SandboxConfig(required=True))
    wrap = manager._sandboxed(Server(ServerConfig(name="s", command="x", sandbox=True), "/w"))
    assert wrap is not None
    with pytest.raises(RuntimeError, match="no sandbox here"):
        wrap(["x"])
    said: list[str] = []
    manager = Manager(lambda note: said.append(note.text))
    manager.configure((), 1000, 1000, sandbox.SandboxConfig())
    assert manager._sandboxed(Server(ServerConfig(name="s", command="x", sandbox=True))) is None
    assert said == ["⚠ MCP server s runs unsandboxed: bubblewrap (bwrap) was not found on $PATH"]


def test_confine_is_the_seam_for_other_commands(tmp_path: Path) -> None:
    argv, status = sandbox.confine(["make"], str(tmp_path), sandbox.SandboxConfig(mode="off"))
    assert argv == ["make"] and not status.sandboxed


def test_a_tool_of_path_under_home_not_found_names_the_home_rule(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PATH", "/h/.nvm/bin:/usr/bin")
    rules = sandbox.refused_by("sh: 1: npm: not found", sandbox.SandboxConfig(), home="/h")
    assert rules == [
        "$HOME is hidden in the sandbox, with the tools $PATH finds there: list their folders "
        "in tools.sandbox.home"
    ]
    monkeypatch.setenv("PATH", "/usr/bin")
    assert sandbox.refused_by("sh: 1: npm: not found", sandbox.SandboxConfig(), home="/h") == []
