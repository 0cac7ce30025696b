"""Shared fixtures: an embedded headless Neovim per test, isolated XDG dirs, polling helpers."""

from __future__ import annotations

import contextlib
import logging
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings

# No test asserts a time (the figures live in `make bench`): hypothesis's per-example
# deadline and its too-slow check would make a property test fail on a busy machine.
# The explain phase (which reads the test's source to word a failure) once failed inside
# hypothesis itself (a KeyError in its source lookup): a failure is shrunk and shown without.
settings.register_profile(
    "sightline",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
)
settings.load_profile("sightline")

# pynvim's child sessions log a harmless "Loop ... is closed" from asyncio on teardown.
logging.getLogger("asyncio").setLevel(logging.ERROR)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))

from tests import child  # noqa: E402
from tests.lua_helper import lua_helper  # noqa: E402
from tests.screen import Screen  # noqa: E402

NVIM = child.NVIM


def wait_for(predicate: Callable[[], Any], timeout: float = 10.0, what: str = "") -> Any:
    """Poll until predicate() is truthy; return its value or fail naming what was awaited."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what or predicate!r}; last value: {last!r}")


@pytest.fixture
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """XDG dirs under tmp_path, no real API key, a workspace dir as cwd."""
    for name in ("DATA", "CONFIG", "STATE", "CACHE"):
        d = tmp_path / "xdg" / name.lower()
        d.mkdir(parents=True)
        monkeypatch.setenv(f"XDG_{name}_HOME", str(d))
    for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "NVIM"):
        monkeypatch.delenv(var, raising=False)
    ws = tmp_path / "ws"
    ws.mkdir()
    monkeypatch.chdir(ws)
    monkeypatch.setenv("SIGHTLINE_ROOT", str(ROOT))
    return ws


def start_nvim(
    config: dict[str, Any] | None = None, env: dict[str, str] | None = None, **kw: Any
) -> Any:
    """A child Neovim whose init.lua calls `require('sightline').setup(config)` as the README
    says; `g=` sets `vim.g.sightline` instead or as well (only for tests about it)."""
    return child.start(config, env, **kw)


@pytest.fixture
def nvim_factory(isolated_env: Path) -> Iterator[Callable[..., Any]]:
    started: list[Any] = []

    def factory(
        config: dict[str, Any] | None = None, env: dict[str, str] | None = None, **kw: Any
    ) -> Any:
        nv = start_nvim(config, env, **kw)
        started.append(nv)
        return nv

    yield factory
    for nv in started:
        with contextlib.suppress(Exception):
            nv.exec_lua("pcall(function() require('sightline.host').shutdown() end)")
        with contextlib.suppress(Exception):
            nv.close()


@pytest.fixture
def nvim(nvim_factory: Callable[..., Any]) -> Any:
    """A child Neovim with the echo provider."""
    return nvim_factory({"provider": {"name": "echo"}})


@pytest.fixture
def screen_factory() -> Iterator[Callable[..., Screen]]:
    """Attach a UI (ext_linegrid) to a child: `screen_factory(nv, width, height)`."""
    screens: list[Screen] = []

    def factory(nv: Any, width: int = 100, height: int = 30) -> Screen:
        screen = Screen.attach(nv, width, height)
        screens.append(screen)
        return screen

    yield factory
    for screen in screens:
        screen.close()


@pytest.fixture
def screen(nvim: Any, screen_factory: Callable[..., Screen]) -> Screen:
    """The echo child with a 100x30 UI attached."""
    return screen_factory(nvim)


def capture_notify(nv: Any) -> Callable[[], list[dict[str, Any]]]:
    """Record vim.notify calls in the child; returns a getter for what was shown."""
    lua_helper(nv, "notes.capture")
    return lambda: list(lua_helper(nv, "notes.taken"))


# How a message cut to one screen line ends (lua/sightline/ui/message.lua, ui/pane/notice.lua).
CUT = ("… (see the pane)", "… (:Sightline chat)")


def said(nv: Any, msg: str) -> str:
    """The whole text of a message vim.notify showed: itself, or, when it was cut to one
    screen line, the pane's note that holds it (the last one shown)."""
    if not msg.endswith(CUT):
        return msg
    note = nv.exec_lua("local n = require('sightline.ui.pane.state').S.notice return n and n.text")
    assert isinstance(note, str), f"{msg!r} was cut but the pane holds no note"
    return "sightline: " + note if msg.startswith("sightline: ") else note


def transcript(nv: Any) -> list[str]:
    buf = nv.exec_lua("return require('sightline.ui.pane').buffers().transcript")
    return list(nv.api.buf_get_lines(buf, 0, -1, False))


def status(nv: Any) -> dict[str, Any]:
    return dict(nv.exec_lua("return require('sightline').status()"))


def wait_idle(nv: Any, timeout: float = 10.0) -> None:
    wait_for(lambda: status(nv)["state"] == "idle", timeout, "the turn to end")
