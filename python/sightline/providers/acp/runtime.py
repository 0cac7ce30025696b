"""The asyncio side of the ACP provider: one event loop on a dedicated thread, and the agent
process it owns.

The SDK is asyncio; the core's turns run on worker threads and pynvim's API belongs to its
own loop thread. So the SDK gets a loop of its own, and the worker talks to it with
run_coroutine_threadsafe. The agent runs in its own process group (so its children can be
stopped with it) and gets SIGKILL when the thread that started it, this loop's, goes away
(PR_SET_PDEATHSIG: the core was killed); a clean exit kills the group (atexit).
"""

from __future__ import annotations

import asyncio
import atexit
import collections
import concurrent.futures
import contextlib
import ctypes
import logging
import os
import signal
import sys
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")
STDIO_LIMIT = 50 * 1024 * 1024  # the SDK's own default for agent traffic
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child before exec: SIGKILL when the parent (thread) dies. Linux only."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


class LoopThread:
    """An event loop running forever on a daemon thread."""

    def __init__(self, name: str = "acp-loop"):
        self.loop = asyncio.new_event_loop()
        # The agent's requests wait for the user on worker threads (asyncio.to_thread): the
        # default pool (a few threads on a small machine) would leave later ones, reads too,
        # unanswered until a decision frees a thread.
        self.loop.set_default_executor(
            concurrent.futures.ThreadPoolExecutor(max_workers=64, thread_name_prefix=name)
        )
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    def call(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run `coro` on the loop and wait for its result (from any other thread)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)


class AgentProcess:
    """The agent's process, its stdio for the SDK and the tail of its stderr."""

    def __init__(self, proc: asyncio.subprocess.Process):
        self.proc = proc
        self.stderr: collections.deque[str] = collections.deque(maxlen=20)
        self._drain: asyncio.Task[None] | None = None
        _live.add(proc.pid)

    @classmethod
    async def spawn(cls, cmd: tuple[str, ...], env: dict[str, str], cwd: str) -> AgentProcess:
        proc = await asyncio.create_subprocess_exec(
            *cmd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, **env},
            cwd=cwd,
            start_new_session=True,
            preexec_fn=_die_with_parent,
            limit=STDIO_LIMIT,
        )
        self = cls(proc)
        self._drain = asyncio.get_running_loop().create_task(self._read_stderr())
        return self

    async def _read_stderr(self) -> None:
        # Always drained, or a chatty agent would block on a full pipe.
        assert self.proc.stderr is not None
        while line := await self.proc.stderr.readline():
            text = line.decode(errors="replace").rstrip()
            if text:
                self.stderr.append(text)
                log.debug("agent stderr: %s", text)

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    def tail(self, lines: int = 3) -> str:
        """Its last few lines of error output, in one bounded line."""
        text = " / ".join(list(self.stderr)[-lines:])
        return text if len(text) <= 400 else "…" + text[-399:]

    async def wait_exit(self, timeout: float) -> int | None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.proc.wait(), timeout)
        return self.proc.returncode

    def kill(self) -> None:
        _kill_group(self.proc.pid)
        _live.discard(self.proc.pid)


_live: set[int] = set()


def _kill_group(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)


@atexit.register
def _kill_all() -> None:
    for pid in list(_live):
        _kill_group(pid)
