"""The Provider protocol and the events a streamed model reply is made of."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class TextDelta:
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
    """Tokens of the reply being streamed so far (shown live in the pane's bar)."""

    input_tokens: int
    output_tokens: int


@dataclass
class Reply:
    """A finished assistant message: content blocks exactly as received, plus accounting."""

    content: list[dict[str, Any]] = field(default_factory=list)
    stop_reason: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0


StreamEvent = TextDelta | Retrying | Usage | Reply


class ProviderError(Exception):
    """A fault the user should read as one clear line (no traceback, no secret)."""

    def __init__(self, message: str, *, retryable: bool = False, retry_after: float | None = None):
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.retry_after = retry_after


@dataclass(frozen=True)
class Request:
    system: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]


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
