"""run_command in the sandbox (bubblewrap), configured as the README says: what a command
can touch is the workspace; not the rest of the disk, not the network, not $HOME's secrets;
a project in the workspace still builds and tests; without bwrap the ask says so."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agent_util import API_KEY, decide, idle, only_result, send, wait_pending
from tests.child import ROOT
from tests.conftest import transcript, wait_for
from tests.fakeapi import FakeAnthropic, fake_api, text, tool_use
from tests.processes import processes_with

__all__ = ["fake_api"]


def run(command: str) -> Any:
    return tool_use("run_command", {"command": command})


def claude_home(nvim_factory: Any, api: FakeAnthropic, home: Path, **cfg: Any) -> Any:
    provider = {"name": "anthropic", "base_url": api.base_url, "retries": 0}
    env = {"ANTHROPIC_API_KEY": API_KEY, "HOME": str(home)}
    return nvim_factory({"provider": provider, **cfg}, env=env)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fake $HOME with a secret in ~/.ssh and a file the user chooses to show."""
    h = tmp_path / "home"
    (h / ".ssh").mkdir(parents=True)
    (h / ".ssh" / "id_ed25519").write_text("SECRET-KEY-MATERIAL\n")
    (h / ".gitconfig").write_text("[user]\n\tname = shown\n")
    return h


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A loopback server this test starts; what reached it."""
    srv = socket.create_server(("127.0.0.1", 0))
    srv.settimeout(0.2)
    got: list[bytes] = []
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = srv.accept()
            except TimeoutError:
                continue
            with conn:
                got.append(conn.recv(64))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield srv.getsockname()[1], got
    done.set()
    thread.join(2)
    srv.close()


def connect(port: int) -> str:
    code = f"import socket; s = socket.create_connection(('127.0.0.1', {port}), 2)"
    return f"{sys.executable} -c \"{code}; s.sendall(b'reached'); print('connected')\""


def test_a_sandboxed_command_writes_only_the_workspace_and_never_reads_home_or_the_network(
    nvim_factory: Any,
    fake_api: FakeAnthropic,
    isolated_env: Path,
    home: Path,
    tmp_path: Path,
    listener: tuple[int, list[bytes]],
) -> None:
    port, got = listener
    outside = tmp_path / "outside.txt"  # beside the workspace, in /tmp: private in there
    var = Path("/var/tmp") / f"sightline-test-{uuid.uuid4().hex}"  # read-only in there
    nv = claude_home(nvim_factory, fake_api, home, tools={"sandbox": {"home": ["~/.gitconfig"]}})
    command = "; ".join(
        [
            "echo in > inside.txt",
            f"echo out > {outside}",
            f"echo out > {var}",
            "cat ~/.ssh/id_ed25519",
            "cat ~/.gitconfig",
            "echo tmp > /tmp/scratch && cat /tmp/scratch",
            connect(port),
            "exit 1",
        ]
    )
    fake_api.script(run(command), text("ok"))
    send(nv)
    wait_pending(nv)
    said = transcript(nv)
    assert any("runs in the sandbox: the workspace writable" in line for line in said), said
    decide(nv, "accept")
    idle(nv)
    result = only_result(fake_api)["content"]
    written = var.exists()
    var.unlink(missing_ok=True)
    assert (isolated_env / "inside.txt").read_text() == "in\n"
    assert not outside.exists() and not written and "Read-only file system" in result
    assert "SECRET" not in result and "id_ed25519: No such file" in result
    assert "name = shown" in result  # what tools.sandbox.home lists shows
    assert "\ntmp\n" in result and not Path("/tmp/scratch").exists()
    assert "connected" not in result and got == []
    # Which rules refused it, as far as the output tells, to the model and in the pane.
    assert "only the workspace is writable in the sandbox" in result
    assert "the sandbox has no network" in result
    assert "$HOME is hidden in the sandbox" in result
    assert any(line.startswith("⚠ the sandbox may have refused it") for line in transcript(nv))


def test_the_same_command_with_the_sandbox_off_reaches_all_of_it(
    nvim_factory: Any,
    fake_api: FakeAnthropic,
    isolated_env: Path,
    home: Path,
    tmp_path: Path,
    listener: tuple[int, list[bytes]],
) -> None:
    """The test above can fail: without the sandbox these same steps succeed."""
    port, got = listener
    outside = tmp_path / "outside.txt"
    nv = claude_home(nvim_factory, fake_api, home, tools={"sandbox": "off"})
    fake_api.script(
        run(f"echo out > {outside}; cat ~/.ssh/id_ed25519; {connect(port)}"), text("ok")
    )
    send(nv)
    wait_pending(nv)
    assert any("runs unsandboxed: tools.sandbox is 'off'" in line for line in transcript(nv))
    decide(nv, "accept")
    idle(nv)
    result = only_result(fake_api)["content"]
    assert outside.exists() and "SECRET" in result and "connected" in result
    wait_for(lambda: got == [b"reached"], what="the loopback server reached")


def test_a_small_project_builds_and_tests_in_the_sandbox(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, home: Path
) -> None:
    (isolated_env / "calc.c").write_text("int add(int a, int b) { return a + b; }\n")
    (isolated_env / "test_calc.c").write_text(
        "#include <stdio.h>\nint add(int, int);\n"
        'int main(void) { if (add(2, 3) != 5) return 1; puts("tests passed"); return 0; }\n'
    )
    (isolated_env / "Makefile").write_text(
        "test: test_calc\n\t./test_calc\n\ntest_calc: calc.c test_calc.c\n\tcc -o $@ $^\n"
    )
    nv = claude_home(nvim_factory, fake_api, home)
    fake_api.script(run("make test"), text("ok"))
    send(nv)
    wait_pending(nv)
    decide(nv, "accept")
    idle(nv)
    result = only_result(fake_api)["content"]
    assert result.startswith("exit code 0") and "tests passed" in result, result
    assert (isolated_env / "test_calc").exists()


def test_without_bwrap_the_ask_says_the_command_runs_unsandboxed(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, tmp_path: Path
) -> None:
    bare = tmp_path / "bin"  # a PATH without bwrap (and with what the command needs)
    bare.mkdir()
    os.symlink(shutil.which("echo") or "/bin/echo", bare / "echo")
    provider = {"name": "anthropic", "base_url": fake_api.base_url, "retries": 0}
    nv = nvim_factory({"provider": provider}, env={"ANTHROPIC_API_KEY": API_KEY, "PATH": str(bare)})
    fake_api.script(run("echo hi"), text("ok"))
    send(nv)
    wait_pending(nv)
    said = transcript(nv)
    assert "  (runs unsandboxed: bubblewrap (bwrap) was not found on $PATH)" in said, said
    decide(nv, "accept")
    idle(nv)
    assert only_result(fake_api)["content"] == "exit code 0\nhi"


def test_required_refuses_to_run_without_a_sandbox(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, tmp_path: Path
) -> None:
    marker = isolated_env / "ran"
    provider = {"name": "anthropic", "base_url": fake_api.base_url, "retries": 0}
    nv = nvim_factory(
        {"provider": provider, "tools": {"sandbox": {"required": True}}},
        env={"ANTHROPIC_API_KEY": API_KEY, "PATH": str(tmp_path)},
    )
    fake_api.script(run(f"/usr/bin/touch {marker}"), text("ok"))
    send(nv)
    idle(nv)
    result = only_result(fake_api)
    assert result["is_error"] and "no sandbox here" in result["content"]
    assert not marker.exists()


def test_a_stopped_sandboxed_command_dies_with_its_whole_tree(
    nvim_factory: Any, fake_api: FakeAnthropic, isolated_env: Path, home: Path
) -> None:
    marker = f"{uuid.uuid4().int % 1000 + 100}.{os.getpid() % 1000 + 7}"
    nv = claude_home(nvim_factory, fake_api, home)
    fake_api.script(run(f"sleep {marker} & sleep {marker}; wait"), text("never sent"))
    send(nv)
    wait_pending(nv)
    decide(nv, "accept")
    wait_for(lambda: len(processes_with(f"sleep {marker}")) >= 4, what="the sandboxed command")
    assert any("bwrap" in Path(f"/proc/{p}/cmdline").read_text() for p in processes_with(marker))
    nv.command("Sightline stop")
    idle(nv)
    wait_for(lambda: processes_with(f"sleep {marker}") == [], what="the whole tree to die")


@pytest.mark.parametrize("boxed", [True, False])
def test_an_mcp_server_that_opts_in_runs_in_the_sandbox(
    nvim_factory: Any,
    fake_api: FakeAnthropic,
    isolated_env: Path,
    home: Path,
    tmp_path: Path,
    boxed: bool,
) -> None:
    outside = Path("/var/tmp") / f"sightline-test-{uuid.uuid4().hex}"  # read-only in there
    demo = ROOT / "tests" / "mcp_servers" / "demo.py"
    server = {
        "command": sys.executable,
        "args": [str(demo)],
        "env": {"DEMO_OUT": str(outside)},
        "sandbox": boxed,
    }
    nv = claude_home(nvim_factory, fake_api, home, mcp={"servers": {"demo": server}})
    fake_api.script(tool_use("mcp__demo__touch", {"text": "hello"}), text("ok"))
    send(nv)
    wait_pending(nv)
    decide(nv, "accept")
    idle(nv)
    result = only_result(fake_api)
    written = outside.exists()
    outside.unlink(missing_ok=True)
    assert written is not boxed
    assert bool(result.get("is_error")) is boxed, result
