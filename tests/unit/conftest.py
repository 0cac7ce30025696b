"""The layering rule of tests/unit: no Neovim. Starting one here fails the test loudly.

Every way a test reaches a Neovim goes through `pynvim.attach` (child.start, a socket) or
starts the `nvim` binary as a process; both are refused while a unit test runs (its setup,
call and teardown, module fixtures included), naming tests/nvim as the place for it.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import pynvim
import pytest

from tests import child

HERE = Path(__file__).resolve().parent
ADVICE = "tests/unit runs without Neovim; a test that needs a child Neovim belongs in tests/nvim"


def refuse(what: str) -> NoReturn:
    # pytest.fail raises an OutcomeException (a BaseException): `except Exception` in the code
    # under test or a fixture's cleanup cannot swallow it.
    pytest.fail(f"{what}: {ADVICE}", pytrace=False)


def program(args: Any) -> str:
    """The program a Popen call starts (for a shell string, its first word)."""
    if isinstance(args, str | bytes | os.PathLike):
        words = os.fsdecode(args).split()
        return words[0] if words else ""
    return os.fsdecode(args[0]) if args else ""


def is_nvim(args: Any) -> bool:
    name = program(args)
    return name == child.NVIM or os.path.basename(name) == "nvim"


class GuardedPopen(subprocess.Popen[Any]):
    """subprocess.Popen that refuses to start the nvim binary."""

    def __init__(self, args: Any, *rest: Any, **kw: Any) -> None:
        if is_nvim(args):
            refuse(f"started {program(args)}")
        super().__init__(args, *rest, **kw)


def refused_attach(*args: Any, **kw: Any) -> NoReturn:
    refuse("pynvim.attach (a Neovim child or socket)")


@contextmanager
def no_neovim() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pynvim, "attach", refused_attach)
        mp.setattr(subprocess, "Popen", GuardedPopen)
        yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    # pytest calls this hook through config.hook, for every item of the session, not only
    # for those under this directory: the guard is for unit tests alone.
    if not item.path.is_relative_to(HERE):
        return (yield)
    with no_neovim():
        return (yield)
