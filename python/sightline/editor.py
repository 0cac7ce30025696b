"""The editor port: the one interface the core uses to touch Neovim.

pynvim's API may only be used on its event-loop thread. Worker threads go through
async_call and wait for the result, so a turn can read and change buffers safely.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Protocol

from sightline import msgtext


class EditorError(Exception):
    """Neovim refused or failed a call; the message is safe to show."""


class Editor(Protocol):
    def lua(self, code: str, *args: Any) -> Any:
        """Run a Lua chunk in Neovim with `...` = args and return its result."""
        ...

    def notify_ui(self, build: Callable[[], dict[str, Any]]) -> None:
        """Queue a UI update for the Lua layer; `build` runs on Neovim's side of the queue,
        so what it reads (status, transcript) is current when the update is sent."""
        ...


# Every request from a worker thread carries a deadline (seconds since the epoch) that the
# Lua side checks first: a call that waited in Neovim's queue past its caller's timeout is
# dropped there instead of acting later. The chunk runs as a function of its own arguments.
_DEADLINE = (
    "local deadline = ... "
    "local s, us = vim.uv.gettimeofday() "
    "if s + us / 1e6 > deadline then return 'sightline:expired-call' end "
    "return (function(...)\n{code}\nend)(select(2, ...))"
)
_EXPIRED = "sightline:expired-call"


class NvimEditor:
    def __init__(self, nvim: Any, timeout_s: float = 30.0):
        self._nvim = nvim
        self._loop_thread = threading.current_thread()
        self._timeout_s = timeout_s

    def _on_loop(self) -> bool:
        return threading.current_thread() is self._loop_thread

    def lua(self, code: str, *args: Any) -> Any:
        if self._on_loop():
            # A handler Neovim waits on: it answers at once, no deadline needed.
            return self._exec(code, args)
        deadline = time.time() + self._timeout_s
        future: Future[Any] = Future()

        def run() -> None:
            if time.time() > deadline or not future.set_running_or_notify_cancel():
                return  # queued past the deadline (or given up): never sent
            try:
                result = self._exec(_DEADLINE.replace("{code}", code), (deadline, *args))
                if result == _EXPIRED:
                    raise EditorError(self._late())
                future.set_result(result)
            except BaseException as err:
                future.set_exception(err)

        self._nvim.async_call(run)
        try:
            return future.result(timeout=self._timeout_s)
        except FutureTimeout:
            future.cancel()
            raise EditorError(self._late()) from None

    def _late(self) -> str:
        return f"Neovim did not answer within {self._timeout_s:g} s; the call was dropped"

    def _exec(self, code: str, args: tuple[Any, ...]) -> Any:
        import pynvim

        try:
            return self._nvim.exec_lua(code, *args)
        except pynvim.NvimError as err:
            raise EditorError(str(err)) from None

    def notify_ui(self, build: Callable[[], dict[str, Any]]) -> None:
        # Always queued, even from the loop thread: the payload is built when its turn in the
        # loop comes, after every request answered before it, so status is never stale.
        code = "require('sightline.host')._on_update(...)"
        self._nvim.async_call(lambda: self._nvim.exec_lua(code, msgtext.safe(build()), async_=True))
