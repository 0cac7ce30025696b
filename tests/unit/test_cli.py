"""The `sightline` command line: `extensions` subcommands, in-process and as a real process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sightline.entry.cli import main
from tests.child import ROOT


def make_source(root: Path, name: str, description: str | None = "Helps with things") -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    manifest: dict[str, str] = {"name": name, "version": "0.3.0"}
    if description:
        manifest["description"] = description
    (folder / "sightline-extension.json").write_text(json.dumps(manifest))
    (folder / "SIGHTLINE.md").write_text("notes\n")
    return folder


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_no_command_prints_help(isolated_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys)
    assert code == 0 and "extensions" in out and err == ""


def test_empty_list(isolated_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["extensions"], ["extensions", "list"], ["extension", "list"]):
        code, out, err = run(capsys, *argv)
        assert (code, err) == (0, "")
        assert out == "No extensions. Install one with: sightline extensions install PATH\n"


def test_install_list_disable_enable_uninstall(
    isolated_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = make_source(tmp_path / "src", "foo")
    data_dir = Path(os.environ["XDG_DATA_HOME"]) / "sightline" / "extensions" / "foo"

    assert run(capsys, "extensions", "install", str(src)) == (
        0,
        f"Installed foo 0.3.0 in {data_dir}\n",
        "",
    )
    code, out, _ = run(capsys, "extensions")
    assert code == 0
    assert out.splitlines() == [
        "NAME  VERSION  STATE   SOURCE  DESCRIPTION",
        "foo   0.3.0    active  user    Helps with things",
    ]

    assert run(capsys, "extensions", "disable", "foo") == (
        0,
        "Disabled foo for you (all workspaces)\n",
        "",
    )
    assert "foo   0.3.0    disabled  user" in run(capsys, "extensions", "list")[1]

    code, out, _ = run(capsys, "extensions", "enable", "foo", "--workspace")
    assert (code, out) == (0, f"Enabled foo for workspace {isolated_env}\n")
    assert "active" in run(capsys, "extensions", "list")[1]

    code, out, _ = run(capsys, "extensions", "list", "--json")
    [status] = json.loads(out)
    assert status == {
        "name": "foo",
        "version": "0.3.0",
        "source": "user",
        "active": True,
        "enabled": True,
        "error": None,
        "path": str(data_dir),
        "description": "Helps with things",
    }

    assert run(capsys, "extensions", "uninstall", "foo") == (
        0,
        f"Uninstalled foo ({data_dir})\n",
        "",
    )
    assert run(capsys, "extensions", "list", "--json")[1] == "[]\n"


def test_workspace_extension_flow(
    isolated_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    make_source(isolated_env / ".sightline" / "extensions", "proj", description=None)
    code, out, _ = run(capsys, "extensions")
    assert out.splitlines() == [
        "NAME  VERSION  STATE     SOURCE     DESCRIPTION",
        "proj  0.3.0    disabled  workspace",
        "",
        "Extensions carried by a workspace stay disabled until you enable them there:",
        "  sightline extensions enable NAME --workspace",
    ]
    code, _, err = run(capsys, "extensions", "enable", "proj")
    assert code == 1
    assert err == (
        "sightline: proj comes from this workspace; enable it for this workspace with --workspace\n"
    )
    assert run(capsys, "extensions", "enable", "proj", "--workspace")[0] == 0
    assert "proj  0.3.0    active  workspace" in run(capsys, "extensions")[1]

    # --workspace DIR: the same, seen from another directory
    os.chdir(tmp_path)
    assert "disabled" not in run(capsys, "extensions", "list", "--workspace", str(isolated_env))[1]
    assert "active" in run(capsys, "extensions", "--workspace", str(isolated_env))[1]
    assert run(capsys, "extensions", "disable", "proj", "--workspace", str(isolated_env))[0] == 0
    assert "disabled" in run(capsys, "extensions", "list", "--workspace", str(isolated_env))[1]


def test_broken_extension_is_listed_with_its_error(
    isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = Path(os.environ["XDG_DATA_HOME"]) / "sightline" / "extensions" / "broken"
    folder.mkdir(parents=True)
    (folder / "sightline-extension.json").write_text('{"name": "broken"')
    code, out, err = run(capsys, "extensions")
    assert (code, err) == (0, "")
    [_, row] = out.splitlines()
    assert row.startswith("broken  -        error  user    error: sightline-extension.json is not")
    code, out, _ = run(capsys, "extensions", "enable", "broken")
    assert code == 0
    assert out.startswith("Enabled broken for you (all workspaces); it is still not active here: ")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["extensions", "install", "/no/such/dir"], "sightline: /no/such/dir: not a folder"),
        (["extensions", "uninstall", "ghost"], "sightline: ghost is not installed"),
        (["extensions", "uninstall", "../etc"], "sightline: invalid name '../etc'"),
        (["extensions", "enable", "ghost"], "sightline: no extension named ghost"),
        (["extensions", "enable"], "sightline: the following arguments are required: NAME"),
        (["extensions", "frobnicate"], "sightline: argument SUBCOMMAND: invalid choice"),
        (["nonsense"], "sightline: argument COMMAND: invalid choice"),
        (
            ["extensions", "list", "--workspace", "/no/such/ws"],
            "sightline: workspace /no/such/ws: not a folder",
        ),
    ],
)
def test_user_errors_exit_1_with_one_line(
    isolated_env: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 1 and out == ""
    assert err.startswith(message) and err.count("\n") == 1
    assert "Traceback" not in err


def test_install_twice_needs_force(
    isolated_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = make_source(tmp_path / "src", "foo")
    assert run(capsys, "extensions", "install", str(src))[0] == 0
    code, _, err = run(capsys, "extensions", "install", str(src))
    assert code == 1 and "use --force to replace it" in err
    assert run(capsys, "extensions", "install", str(src), "--force")[0] == 0


def test_help_exits_0(isolated_env: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "extensions", "enable", "--help")
    assert code == 0 and "--workspace [DIR]" in out


def test_real_process(isolated_env: Path, tmp_path: Path) -> None:
    """`python -m sightline` as a user runs it: its own process, XDG dirs from the environment."""
    src = make_source(tmp_path / "src", "foo")
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT / "python"),
        "XDG_DATA_HOME": os.environ["XDG_DATA_HOME"],
        "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
    }

    def sightline(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "sightline", *argv],
            cwd=isolated_env,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    done = sightline("extensions", "install", str(src))
    assert (done.returncode, done.stderr) == (0, "")
    done = sightline("extensions", "list", "--json")
    assert done.returncode == 0
    assert [(s["name"], s["active"]) for s in json.loads(done.stdout)] == [("foo", True)]
    done = sightline("extensions", "uninstall", "nope")
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "sightline: nope is not installed\n"
