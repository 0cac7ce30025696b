"""Every RPC method, fuzzed: any params answer ok, or a clear one-line refusal.

The rule (rpc.py): each method declares the shape of its params and `dispatch` checks them
before the handler runs; an `internal error` answer is a bug. A Core is built on the
in-memory FakeEditor, in isolated XDG dirs; an audit hook refuses (and records) every write
outside the test's tmp dirs while the fuzz runs.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sightline.agent.session import MODES
from sightline.core import Core
from sightline.domain import extensions
from sightline.entry import rpc
from sightline.gate.decisions import DECISIONS
from tests.effective_config import EFFECTIVE, effective, merged
from tests.extensions_util import make_extension
from tests.fake_editor import FakeEditor
from tests.strategies import (
    anything,
    config_values,
    odd_text,
)

# -- writes outside the sandbox ----------------------------------------------------------------

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PATH_EVENTS = {
    "os.mkdir": (0,),
    "os.rename": (0, 1),
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.symlink": (1,),
    "os.link": (1,),
    "os.truncate": (0,),
    "os.chmod": (0,),
    "shutil.rmtree": (0,),
    "shutil.copyfile": (1,),
}


class Sandbox:
    """Audit hooks cannot be removed: one per process, armed only while an example runs
    (hypothesis keeps files of its own)."""

    roots: ClassVar[tuple[str, ...]] = ()
    violations: ClassVar[list[str]] = []
    installed: ClassVar[bool] = False

    @classmethod
    def arm(cls, *roots: Path) -> None:
        if not cls.installed:
            sys.addaudithook(cls._hook)
            cls.installed = True
        cls.violations = []
        cls.roots = tuple(os.path.realpath(r) for r in roots)

    @classmethod
    def disarm(cls) -> list[str]:
        cls.roots = ()
        return cls.violations

    @classmethod
    def _hook(cls, event: str, args: tuple[Any, ...]) -> None:
        if not cls.roots:
            return
        if event == "open":
            path, mode, flags = args
            writing = (
                any(c in mode for c in "wax+") if isinstance(mode, str) else flags & _WRITE_FLAGS
            )
            targets = [path] if writing else []
        elif event in _PATH_EVENTS:
            targets = [args[i] for i in _PATH_EVENTS[event]]
        else:
            return
        for target in targets:
            if isinstance(target, int) or target is None:
                continue  # an open file descriptor: its opening was checked
            where = os.path.realpath(os.fsdecode(target))
            if where == os.devnull:
                continue  # subprocess's DEVNULL
            if not any(where == r or where.startswith(r + os.sep) for r in cls.roots):
                cls.violations.append(f"{event} {where}")
                raise PermissionError(f"test sandbox: no writes outside the tmp dirs ({where})")


# -- the core under test ------------------------------------------------------------------------


class World:
    def __init__(self, root: Path):
        self.root = root
        self.ws = root / "ws"
        (self.ws / "src").mkdir(parents=True)
        (self.ws / "src" / "a.py").write_text("def f():\n    if x:\n        pass\n")
        (self.ws / "notes.txt").write_text("notes\n")
        self.other = root / "other"
        self.other.mkdir()
        user_exts = root / "xdg" / "data" / "sightline" / "extensions"
        self.good = make_extension(user_exts, "good", "good things")
        self.deep = make_extension(user_exts, "deep", "deep things")
        deep_manifest = "[" * 50_000 + "]" * 50_000
        (self.deep / extensions.MANIFEST_FILE).write_text(deep_manifest)
        self.source = make_extension(root / "src-exts", "fresh", "fresh things")
        self.editor = FakeEditor()
        self.core = Core(self.editor)
        self.core.configure(effective())  # as the Lua side's core.init does first
        self.core.set_workspace(str(self.ws))

    def settle(self) -> None:
        """Stop a running turn and let its thread end, so examples do not pile up."""
        self.core.session.stop()
        deadline = time.monotonic() + 5
        while self.core.session.turn is not None and time.monotonic() < deadline:
            time.sleep(0.005)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("fuzz")
    with pytest.MonkeyPatch.context() as mp:
        for name in ("DATA", "CONFIG", "STATE", "CACHE"):
            d = root / "xdg" / name.lower()
            d.mkdir(parents=True)
            mp.setenv(f"XDG_{name}_HOME", str(d))
        for var in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
            mp.delenv(var, raising=False)
        mp.chdir(root / "xdg")
        w = World(root)
        mp.chdir(w.ws)
        try:
            yield w
        finally:
            w.settle()
            w.core.completion.wait_idle(5)


# -- generated params -------------------------------------------------------------------------


def path_values(w: World) -> st.SearchStrategy[Any]:
    return st.sampled_from(
        [
            str(w.ws),
            str(w.other),
            str(w.ws / "notes.txt"),
            str(w.ws / "missing"),
            str(w.source),
            "src",
            "",
            "~",
            "/" + "a" * 5000,
            "a/" * 2100,
            str(w.ws) + "/" + "n" * 300,
            str(w.ws) + "/x\0y",
            str(w.ws) + "/\ud800",
        ]
    )


def sane_dir(w: World, value: Any) -> Any:
    # An existing directory outside the sandbox (`/`, `/tmp`) is a valid workspace; walking it
    # would only cost time, so the fuzz stays in its own.
    if isinstance(value, str) and value and "\0" not in value:
        try:
            if os.path.isdir(value) and not value.startswith(str(w.root)):
                return str(w.other)
        except (OSError, ValueError):
            pass
    return value


def param_values(w: World, name: str) -> st.SearchStrategy[Any]:
    texts = st.one_of(
        odd_text,
        st.sampled_from(["hi", "@ext:good hi", "@ext:deep x", "@src/a.py", "@notes.txt @missing"]),
    )
    plausible: dict[str, st.SearchStrategy[Any]] = {
        "config": config_values(),
        "workspace": path_values(w).map(lambda v: sane_dir(w, v)),
        "path": path_values(w),
        "conversation": path_values(w),
        "text": texts,
        "name": st.sampled_from(["good", "deep", "fresh", "../x", "Nope", "a" * 300]),
        "mode": st.sampled_from([*MODES, "x"]),
        "decision": st.sampled_from([*DECISIONS, "x"]),
        "reason": odd_text,
        "before": texts.map(lambda t: "see @" + t),
        "token": texts,
        "member_key": st.sampled_from(["f", "a.b", "x" * 2000, ""]),
        "syntax_scope": st.lists(
            st.fixed_dictionaries(
                {"kind": st.sampled_from(["if", "for", "x"]), "index_in_parent": st.integers(-1, 3)}
            ),
            max_size=3,
        ),
        "near_line": st.integers(-5, 10),
    }
    for key in ("buffer", "start_row", "start_col", "end_row", "end_col"):
        plausible[key] = st.integers(-1, 3)
    for key in ("value", "force", "workspace_scope"):
        plausible[key] = st.booleans()
    return plausible.get(name, anything) | anything


@st.composite
def requests(draw: st.DrawFn, w: World, name: str) -> list[Any]:
    shape = draw(st.sampled_from(["params", "params", "params", "none", "empty", "other"]))
    if shape == "none":
        return []
    if shape == "empty":
        return [[]]
    if shape == "other":
        return [draw(anything)]
    params: dict[Any, Any] = {}
    for key in rpc.SCHEMAS[name]:
        if draw(st.booleans()):
            value = draw(param_values(w, key))
            params[key] = sane_dir(w, value) if key == "workspace" else value
    params.update(draw(st.dictionaries(st.text(max_size=6), anything, max_size=2)))
    return [params]


def check_answer(name: str, answer: Any) -> None:
    assert isinstance(answer, dict), answer
    assert answer.get("ok") in (True, False), answer
    # What pynvim would send back to Neovim: it must pack.
    msgpack.packb(answer, unicode_errors="surrogateescape")
    if answer["ok"]:
        return
    error = answer.get("error")
    assert isinstance(error, str) and error.strip(), answer
    assert "\n" not in error and len(error) <= rpc.MAX_ERROR_CHARS, error[:300]
    assert "internal error" not in error, error
    assert "Traceback" not in error, error


def test_every_method_declares_its_params() -> None:
    assert set(rpc.SCHEMAS) == set(rpc.METHODS)


@pytest.mark.parametrize("name", sorted(rpc.METHODS))
def test_fuzz_method(world: World, name: str) -> None:
    @settings(
        max_examples=40,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(args=requests(world, name))
    def run(args: list[Any]) -> None:
        Sandbox.arm(world.root)
        try:
            answer = rpc.dispatch(world.core, name, args)
        finally:
            world.settle()
            violations = Sandbox.disarm()
        check_answer(name, answer)
        assert violations == []

    run()
    assert not [t for t in threading.enumerate() if t.name.startswith("turn-") and t.is_alive()]


def test_unknown_method_is_refused(world: World) -> None:
    answer = rpc.dispatch(world.core, "no.such", [{}])
    assert answer == {"ok": False, "error": "unknown request 'no.such'"}


# -- the instances the hostile test found (issue 10 §6) -------------------------------------


def refusal(world: World, name: str, params: Any) -> str:
    answer = rpc.dispatch(world.core, name, [params])
    check_answer(name, answer)
    assert answer["ok"] is False, answer
    return str(answer["error"])


@pytest.mark.parametrize("name", ["core.init", "core.configure"])
@pytest.mark.parametrize(
    ("config", "error"),
    [
        ("x", "config: expected a table, got a string"),
        ({"provider": 5}, "config: provider: expected a table, got a number"),
        ({"provider": {"max_tokens": "8k"}}, "provider.max_tokens: expected a whole number"),
        ({"provider": {"name": "nope"}}, "config: provider.name: expected one of "),
        ({"tools": {"command_timeout_ms": float("nan")}}, "tools.command_timeout_ms: expected"),
        ({"autoaccept": "yes"}, "config: autoaccept: expected true or false, got a string"),
    ],
)
def test_a_bad_config_is_refused_and_changes_nothing(
    world: World, name: str, config: Any, error: str
) -> None:
    before = world.core.cfg
    config = merged(EFFECTIVE, config)  # one bad value in an otherwise whole config
    assert refusal(world, name, {"config": config}).startswith(f"{name}: ")
    assert error in refusal(world, name, {"config": config})
    assert world.core.cfg is before


def test_a_good_config_applies() -> None:
    core = Core(FakeEditor())
    config = effective(provider={"name": "echo", "max_tokens": 100.0, "timeout_ms": 1.5}, pane=1)
    assert rpc.dispatch(core, "core.configure", [{"config": config}])["ok"] is True
    assert (core.cfg.provider.max_tokens, core.cfg.provider.timeout_ms) == (100, 2)


def test_an_empty_workspace_is_refused(world: World) -> None:
    workspace = world.core.session.workspace
    for params, error in [
        ({"workspace": ""}, "core.init: workspace: expected a non-empty string"),
        ({"workspace": "rel"}, "core.init: workspace: expected an absolute path"),
        ({"workspace": str(world.ws / "notes.txt")}, "expected an existing directory"),
    ]:
        assert error in refusal(world, "core.init", params)
    assert error in refusal(world, "agent.send", {"text": "hi", "workspace": "/nope"})
    assert world.core.session.workspace == workspace


@pytest.mark.parametrize(
    ("name", "key"),
    [("history.open", "path"), ("extensions.install", "path"), ("core.init", "conversation")],
)
def test_very_long_paths_are_refused(world: World, name: str, key: str) -> None:
    long = "/" + "a" * 5000
    assert refusal(world, name, {key: long}) == (
        f"{name}: {key}: expected at most 4096 characters, got 5001"
    )
    wide = "/tmp" + ("/" + "é" * 120) * 18  # 2182 characters, 4342 bytes
    assert refusal(world, name, {key: wide}) == (
        f"{name}: {key}: expected a path shorter than 4096 bytes, got 4342"
    )
    assert refusal(world, name, {key: "/tmp/" + "n" * 300}) == (
        f"{name}: {key}: expected a path whose every name is at most 255 bytes"
    )
