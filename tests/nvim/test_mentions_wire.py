"""`@ext:<name>` and `@path` at send: what the model receives (loopback Messages server),
what the transcript shows and what history records."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sightline.domain import extensions
from tests.conftest import transcript, wait_for, wait_idle
from tests.extensions_util import make_extension
from tests.fakeapi import FakeAnthropic, fake_api, text

__all__ = ["fake_api"]


def claude(nvim_factory: Any, server: FakeAnthropic, **cfg: Any) -> Any:
    provider = {"name": "anthropic", "base_url": server.base_url, "retries": 0}
    return nvim_factory({"provider": provider, **cfg}, env={"ANTHROPIC_API_KEY": "k-test"})


def send(nv: Any, message: str, **opts: Any) -> None:
    assert nv.exec_lua("return {require('sightline').send(...)}", message, opts) == [True]
    wait_idle(nv)


def parts_of(server: FakeAnthropic, n: int) -> list[str]:
    """The text parts of the last user message of request n (1-based), without the part
    naming the message's chips for reveal_attachment (tests/unit/test_chips.py checks that)."""
    req = server.wait_for_requests(n)[n - 1]
    texts = [p["text"] for p in req.body["messages"][-1]["content"]]
    return [t for t in texts if not t.startswith("Code references in this message")]


@pytest.fixture
def exts(isolated_env: Path, tmp_path: Path) -> Path:
    """browser-tools (active), k8s (disabled), ws-tool (carried by the workspace)."""
    src = tmp_path / "src"
    extensions.install(make_extension(src, "browser-tools", "Browser helpers"))
    extensions.install(make_extension(src, "k8s", "Cluster notes"))
    extensions.disable("k8s", workspace=isolated_env)
    make_extension(isolated_env / ".sightline" / "extensions", "ws-tool", "Repo tool")
    return isolated_env


def test_active_mentions_become_parts_after_the_text_as_typed(
    nvim_factory: Any, fake_api: FakeAnthropic, exts: Path
) -> None:
    nv = claude(nvim_factory, fake_api)
    fake_api.script(text("Using the browser."))
    typed = (
        "use @ext:browser-tools, then @ext:browser-tools again;"
        " @ext:nope @ext:k8s @ext:ws-tool and mail@ext:browser-tools"
    )
    send(nv, typed)
    first, *rest = parts_of(fake_api, 1)
    assert first == typed  # unchanged, the first part
    (part,) = rest  # once, despite two mentions; unknown / inactive / in a word: skipped
    assert part.startswith('<extension name="browser-tools">')
    assert "description: Browser helpers" in part
    assert "browser-tools knows things." in part
    assert part.endswith("</extension>")
    lines = transcript(nv)
    assert typed in lines and not any("knows things" in line for line in lines)
    # history keeps what was shown and everything that was sent
    path = Path(nv.exec_lua("return require('sightline.host').status().conversation_path"))
    user = [json.loads(r) for r in path.read_text().splitlines()][1]
    assert user["visible"] == typed
    assert [c["text"] for c in user["content"]] == [typed, part]


def test_workspace_extension_counts_once_enabled_there(
    nvim_factory: Any, fake_api: FakeAnthropic, exts: Path
) -> None:
    nv = claude(nvim_factory, fake_api)
    send(nv, "@ext:ws-tool hello")
    assert parts_of(fake_api, 1) == ["@ext:ws-tool hello"]
    nv.command("Sightline extension enable ws-tool --workspace")
    send(nv, "@ext:ws-tool again")
    assert parts_of(fake_api, 2)[1].startswith('<extension name="ws-tool">')


def test_path_mention_attaches_the_buffer_text_when_loaded(
    nvim_factory: Any, fake_api: FakeAnthropic, exts: Path
) -> None:
    (exts / "src").mkdir()
    (exts / "src" / "open.py").write_text("on disk\n")
    (exts / "src" / "closed.py").write_text("closed file\n")
    nv = claude(nvim_factory, fake_api)
    nv.command(f"edit {exts / 'src' / 'open.py'}")
    nv.api.buf_set_lines(0, 0, -1, False, ["unsaved", "edit"])
    send(nv, "compare @src/open.py with @src/closed.py and @missing.py @../etc/passwd")
    _, opened, closed = parts_of(fake_api, 1)
    assert opened == '<file path="src/open.py">\nunsaved\nedit\n</file>'
    assert closed == '<file path="src/closed.py">\nclosed file\n</file>'


def test_mention_parts_follow_the_selection_block(
    nvim_factory: Any, fake_api: FakeAnthropic, exts: Path
) -> None:
    nv = claude(nvim_factory, fake_api)
    (exts / "a.py").write_text("x = 1\n")
    nv.command(f"edit {exts / 'a.py'}")
    rng = {"buffer": 0, "start_row": 0, "start_col": 0, "end_row": 0, "end_col": 5}
    send(nv, "rename per @ext:browser-tools", **rng)
    instruction, block, ext_part = parts_of(fake_api, 1)
    assert instruction == "rename per @ext:browser-tools"
    assert block.startswith("The selection: a.py, line 1.")
    assert ext_part.startswith('<extension name="browser-tools">')


def test_limits_come_from_the_config(
    nvim_factory: Any, fake_api: FakeAnthropic, exts: Path
) -> None:
    (exts / "big.txt").write_text("a" * 100 + "\n")
    nv = claude(nvim_factory, fake_api, mentions={"max_file_bytes": 10, "max_total_bytes": 64})
    send(nv, "@big.txt")
    (_, part) = parts_of(fake_api, 1)
    assert part.startswith('<file path="big.txt" truncated="true">\naaaaaaaaaa\n[cut: only')


def test_echo_turn_with_mentions_still_works(nvim: Any, exts: Path) -> None:
    nvim.exec_lua("assert(require('sightline').send('@ext:browser-tools hi'))")
    wait_for(lambda: "echo: @ext:browser-tools hi" in transcript(nvim), 10, "the echo")
