"""The test suite's layout is a rule: tests/unit never starts a Neovim, tests/nvim holds the
tests that do, and test modules share helpers only through support modules."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest

from tests import child

TESTS = child.ROOT / "tests"
FAILED = pytest.fail.Exception


def test_a_unit_test_cannot_start_a_neovim_child(isolated_env: Path) -> None:
    # The nvim_factory fixture and every bench and helper start children through child.start.
    with pytest.raises(FAILED, match="belongs in tests/nvim"):
        child.start({"provider": {"name": "echo"}})


def test_the_nvim_fixture_fails_a_unit_test(request: pytest.FixtureRequest) -> None:
    with pytest.raises(FAILED, match="belongs in tests/nvim"):
        request.getfixturevalue("nvim")


def test_a_unit_test_cannot_run_the_nvim_binary_but_runs_other_programs() -> None:
    for argv in ([child.NVIM, "--version"], ["nvim", "--headless"], "nvim --version"):
        with pytest.raises(FAILED, match="belongs in tests/nvim"):
            subprocess.run(argv, shell=isinstance(argv, str), capture_output=True, check=False)
    assert subprocess.run(["true"], check=False).returncode == 0


def test_a_unit_test_cannot_attach_to_a_listening_neovim(tmp_path: Path) -> None:
    import pynvim

    with pytest.raises(FAILED, match=r"pynvim\.attach"):
        pynvim.attach("socket", path=str(tmp_path / "nvim.sock"))


def test_the_guard_leaves_the_tests_of_tests_nvim_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    # pytest runs pytest_runtest_protocol hooks for every item, whatever the conftest's
    # directory: in one session of both layers (make test), tests/nvim must still attach.
    from types import SimpleNamespace

    import pynvim

    from tests.unit import conftest as guard

    def outside(*args: object, **kw: object) -> None:
        raise AssertionError("never called")

    monkeypatch.setattr(pynvim, "attach", outside)  # what a test of tests/nvim would find
    for where, seen in (("nvim", outside), ("unit", guard.refused_attach)):
        item = SimpleNamespace(path=guard.HERE.parent / where / "test_x.py")
        run = guard.pytest_runtest_protocol(item, None)  # type: ignore[arg-type]
        next(run)
        assert pynvim.attach is seen, where
        with pytest.raises(StopIteration):
            run.send(None)
        assert pynvim.attach is outside


def test_every_test_module_is_in_a_layer() -> None:
    loose = sorted(p.name for p in TESTS.glob("test_*.py"))
    assert loose == [], f"move {loose} into tests/unit (no Neovim) or tests/nvim (a child)"


def test_test_modules_import_no_other_test_module() -> None:
    offenders = []
    for path in sorted(p for d in ("", "unit/", "nvim/") for p in TESTS.glob(f"{d}test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            if any(name.rsplit(".", 1)[-1].startswith("test_") for name in names):
                offenders.append(f"{path.relative_to(TESTS)}:{node.lineno}")
    assert offenders == [], f"shared helpers belong in support modules: {offenders}"
