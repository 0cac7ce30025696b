"""The asyncio side of the ACP provider: one event loop on a dedicated thread, and the agent
process it owns.

The SDK is asyncio; the core's turns run on worker threads and pynvim's API belongs to its
own loop thread. So the SDK gets a loop of its own, and the worker talks to it with
run_coroutine_threadsafe. The agent runs in its own process group, killed with all it started
when the provider stops it and however the core ends (domain/spawn.py).
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import logging
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from sightline.domain import spawn

log = logging.getLogger(__name__)

T = TypeVar("T")
STDIO_LIMIT = 50 * 1024 * 1024  # the SDK's own default for agent traffic


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

    def __init__(self, proc: asyncio.subprocess.Process, group: spawn.Group):
        self.proc = proc
        self.group = group
        self.stderr: collections.deque[str] = collections.deque(maxlen=20)
        # Always drained, or a chatty agent would block on a full socket.
        group.lifeline.read_lines(self._stderr_line)

    @classmethod
    async def spawn(cls, cmd: tuple[str, ...], env: dict[str, str], cwd: str) -> AgentProcess:
        # Its own process group, killed whole however the core ends (domain/spawn.py); its
        # stderr is the group's lifeline.
        proc, group = await spawn.exec_async(
            cmd,
            on=spawn.STDERR,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env={**os.environ, **env},
            cwd=cwd,
            limit=STDIO_LIMIT,
        )
        return cls(proc, group)

    def _stderr_line(self, line: str) -> None:
        text = line.rstrip()
        if text:
            self.stderr.append(text)
            log.debug("agent stderr: %s", text)

    @property
    def alive(self) -> bool:
        return self.proc.returncode is None

    def tail(self, lines: int = 3) -> str:
        """Its last few lines of error output, in one bounded line."""
        self.group.lifeline.flushed()
        text = " / ".join(list(self.stderr)[-lines:])
        return text if len(text) <= 400 else "…" + text[-399:]

    async def wait_exit(self, timeout: float) -> int | None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.proc.wait(), timeout)
        return self.proc.returncode

    def kill(self) -> None:
        self.group.kill()
