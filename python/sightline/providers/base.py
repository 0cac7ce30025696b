"""The Provider protocol and the events a streamed model reply is made of."""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from sightline.domain import secrets, spawn


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ThinkingDelta:
    """Streamed reasoning of the model (shown dimmed; recorded only as the API returns it)."""

    text: str


@dataclass(frozen=True)
class Retrying:
    """The core is about to retry a failed request; shown in the pane."""

    attempt: int
    of: int
    delay_s: float
    reason: str


@dataclass(frozen=True)
class Usage:
    """Token counts of the request in progress so far (live accounting; the Reply has the
    final ones). `input` excludes tokens read from or written to the prompt cache."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0


@dataclass
class Reply:
    """A finished assistant message: content blocks exactly as received, plus accounting."""

    content: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def usage(self) -> Usage:
        return Usage(
            self.input_tokens, self.output_tokens, self.cache_read_tokens, self.cache_write_tokens
        )


@dataclass(frozen=True)
class Notice:
    """Something the pane says once during a turn (e.g. tools turned off for this model)."""

    text: str


StreamEvent = TextDelta | ThinkingDelta | Retrying | Usage | Notice | Reply


class ProviderError(Exception):
    """A fault the user should read as one clear line (no traceback, no secret)."""

    def __init__(self, message: str, *, retryable: bool = False, retry_after: float | None = None):
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after


@dataclass(frozen=True)
class Request:
    """What one model call sends. The one choke point of the redactor for the model: every
    byte of it (system text, tool results, mention parts, selection blocks, the tool list)
    is redacted when it is built, so no provider can send a known secret."""

    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    # provider.thinking applies (off for a summarising request: see agent/compaction.py).
    thinking: bool = True

    def __post_init__(self) -> None:
        for name in ("system", "messages", "tools"):
            object.__setattr__(self, name, secrets.redact_value(getattr(self, name)))


class Provider(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

    def stream(self, request: Request, cancelled: Callable[[], bool]) -> Iterator[StreamEvent]:
        """Yield TextDelta events as they arrive, then exactly one Reply; raise ProviderError."""
        ...

    def prepare(self) -> None:
        """Get ready to stream (import, credentials); raise ProviderError when it cannot."""
        ...

    def cancel(self) -> None:
        """Close the stream in progress, from another thread; later events are dropped."""
        ...


class TurnRunner(Protocol):
    """A provider that runs a whole turn itself (an ACP agent has its own tool loop).

    The seam with the session: when the provider has `run_turn`, Session._run calls it
    instead of its own request/tool loop, after `prepare()` and after the user message is
    recorded. It returns the turn's status ("done", "stopped", ...) or raises ProviderError;
    the session still finishes the turn, and `stop()` still calls `cancel()`."""

    def run_turn(self, turn: Any, user: dict[str, Any]) -> str: ...


class AbortableStream:
    """`cancel()` for a provider whose stream runs over an abortable HTTP client (anthropic,
    openai): closing a response alone does not wake a read blocked on the socket."""

    _cancelled: threading.Event
    _lock: threading.Lock
    _stream: Any
    _abort: Callable[[], None] | None

    def cancel(self) -> None:
        self._cancelled.set()
        with self._lock:
            stream = self._stream
        if stream is not None and self._abort is not None:
            self._abort()
        if stream is not None:
            # Closing a half-read response from another thread may complain; it is closed anyway.
            with contextlib.suppress(Exception):
                stream.close()


def key_from_cmd(cmd: str | list[str], timeout_s: float) -> str | None:
    """The key `provider.api_key_cmd` prints, run once: no stdin (the core's stdin is its RPC
    channel to Neovim) and an environment without the keys the core knows. The caller
    registers the key with the redactor."""
    argv = shlex.split(cmd) if isinstance(cmd, str) else cmd
    try:
        # Its own process group, killed whole at the timeout or when the core ends; its
        # stdin is the group's lifeline, not the core's (domain/spawn.py).
        done = spawn.run(argv, timeout_s, env=secrets.scrubbed_env(dict(os.environ)))
        done.check_returncode()
        out = done.stdout.decode(errors="replace")
    except (OSError, ValueError, subprocess.SubprocessError) as err:
        raise ProviderError(
            f"provider.api_key_cmd failed ({type(err).__name__}): check the command."
        ) from None
    return out.strip() or None
