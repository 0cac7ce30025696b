"""The Provider protocol, the events a streamed model reply is made of, and what every
provider shares: the retry loop, the abortable stream, the api_key_cmd runner.

A new provider is one module with a class implementing `Provider` (subclass `ProviderBase`
for the defaults), one line in providers/__init__.py REGISTRY, its name in the Lua
schema (lua/sightline/config.lua PROVIDERS; tests/nvim/test_port_config.py holds the
two equal) and its models in domain/models.py (tools, vision, thinking, context, price).
The core asks a provider what it can do (`capabilities`, `Capabilities.for_model` of its
model), never its name."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import os
import shlex
import subprocess
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from sightline.domain import models, secrets, spawn

if TYPE_CHECKING:
    from sightline.gate.turn_contract import Turn

MAX_RETRY_AFTER_S = 30.0


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


@dataclass(frozen=True)
class Capabilities:
    """What a provider can do with its model; the core and the pane read these, never the
    provider's name. The provider's own facts are set by it; the model's (tools, vision,
    thinking, context window, price) come from domain/models.py through `for_model`."""

    # What provider.thinking means to it: a token budget, an effort name, or nothing.
    thinking: Literal["budget", "effort"] | None = None
    # It runs whole turns itself (`run_turn`: an ACP agent's own tool loop) instead of
    # streaming one request at a time through the session's loop.
    runs_turns: bool = False
    # `:Sightline model NAME` applies (echo has one model).
    choose_model: bool = True
    # It runs on this machine: no cost, and a model's context size is not known by name.
    local: bool = False
    # Its replies carry signatures on text and tool_use blocks (Gemini's thought
    # signatures) that must go back in the same blocks: wire_messages keeps them.
    signed_parts: bool = False
    # Billed by a subscription, not by tokens (Copilot's premium requests): no cost is shown
    # unless provider.prices names the model.
    subscription: bool = False
    # The model takes provider.thinking (False: the setting is not sent, as the API
    # would refuse it).
    thinks: bool = True
    # The model calls tools; without, the loop offers none and it chats (said once).
    tools: bool = True
    # The model reads images (an attached image is sent to it, not left out).
    vision: bool = False
    # The model's context window in tokens; None = not known (pricing.context_window).
    context_window: int | None = None
    # The model's list price per million tokens; None = not known ({} for a local one).
    price: Mapping[str, float] | None = None

    def for_model(self, model: str) -> Capabilities:
        """These facts of the provider joined with what domain/models.py knows of `model`."""
        found = models.lookup(model)
        return dataclasses.replace(
            self,
            thinks=found.thinking is not False,
            tools=found.tools,
            vision=bool(found.vision),
            context_window=None if self.local else found.context,
            price={} if self.local else found.price,
        )

    def to_dict(self) -> dict[str, Any]:
        """What the pane reads (status().capabilities)."""
        return {
            "tools": self.tools,
            "vision": self.vision,
            "thinking": self.thinking if self.thinks else None,
            "context_window": self.context_window,
            "local": self.local,
        }


class Provider(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def stream(self, request: Request, cancelled: Callable[[], bool]) -> Iterator[StreamEvent]:
        """Yield TextDelta events as they arrive, then exactly one Reply; raise ProviderError."""
        ...

    def prepare(self) -> None:
        """Get ready to stream (import, credentials); raise ProviderError when it cannot."""
        ...

    def cancel(self) -> None:
        """Close the stream in progress, from another thread; later events are dropped."""
        ...

    def run_turn(self, turn: Turn, user: dict[str, Any]) -> str:
        """Run a whole turn (only when `capabilities.runs_turns`): called by the session
        instead of its own request/tool loop, after `prepare()` and after the user message
        is recorded. Returns the turn's status ("done", "stopped", ...) or raises
        ProviderError; the session still finishes the turn, and `stop()` still calls
        `cancel()`."""
        ...

    def scope_refusal(self) -> str | None:
        """Why Change with Agent cannot keep its guarantee with this provider, or None."""
        ...

    def models(self) -> list[str]:
        """The models it offers (may ask a server: called off Neovim's thread); raise
        ProviderError."""
        ...

    def close(self) -> None:
        """Release what it holds (an agent process) when the config changes."""
        ...

    def preload(self) -> threading.Event:
        """Start, in the background, what the first request needs (importing an SDK costs
        ~1.5 s); the event is set once that is done."""
        ...


class ProviderBase:
    """The defaults of the optional parts of `Provider`."""

    capabilities = Capabilities()

    def run_turn(self, turn: Turn, user: dict[str, Any]) -> str:
        raise ProviderError("this provider streams requests; it runs no whole turns")

    def scope_refusal(self) -> str | None:
        return None

    def models(self) -> list[str]:
        return []

    def model_notes(self) -> dict[str, str]:
        """A word on some of the models `models()` listed (copilot: the premium multiplier)."""
        return {}

    def close(self) -> None:
        pass

    def preload(self) -> threading.Event:
        done = threading.Event()
        done.set()
        return done


def preload_module(module: str) -> threading.Event:
    """Import `module` on a background thread (once per process); the event is set when
    the import is done, whether it worked or not."""
    with _PRELOAD_LOCK:
        done = _PRELOADS.get(module)
        if done is not None:
            return done
        done = _PRELOADS[module] = threading.Event()

    def run() -> None:
        try:
            importlib.import_module(module)
        except ImportError:
            pass  # said by prepare(), on the first send
        finally:
            done.set()

    threading.Thread(target=run, name=f"sightline-import-{module}", daemon=True).start()
    return done


_PRELOADS: dict[str, threading.Event] = {}
_PRELOAD_LOCK = threading.Lock()


def address_origin(configured: str | None, env_var: str | None = None) -> str:
    """Where the address a provider connects to came from, said by its connection errors
    (`address from provider.base_url`): the user looks there, not at a key they never set."""
    if configured:
        return "address from provider.base_url"
    if env_var and os.environ.get(env_var):
        return f"address from ${env_var}"
    return "the provider's default address"


def with_retries(
    once: Callable[[], Iterator[StreamEvent]],
    classify: Callable[[BaseException], ProviderError],
    retries: int,
    stopped: Callable[[], bool],
    wait: Callable[[float], bool],
    recover: Callable[[ProviderError], StreamEvent | None] = lambda fault: None,
) -> Iterator[StreamEvent]:
    """The one retry loop of the providers: run `once` (one streamed request) until it ends,
    retrying a retryable fault up to `retries` times, each retry announced (`Retrying`) so
    the pane can say so. Only before the first delta: text already shown cannot be taken
    back. `retry-after` is honoured up to MAX_RETRY_AFTER_S, else 0.5 s doubling.
    `recover` may turn a fault into a notice and try again at once, not counted as a retry
    (a model that refuses tools); `wait(delay)` returns True when stopped meanwhile."""
    attempts = max(0, retries) + 1
    attempt = 1
    while True:
        emitted = False
        try:
            for item in once():
                emitted = emitted or isinstance(item, TextDelta | ThinkingDelta)
                yield item
            return
        except Exception as err:
            if stopped():
                return
            fault = classify(err)
            notice = recover(fault)
            if notice is not None:
                yield notice
                continue
            if not fault.retryable or emitted or attempt == attempts:
                raise fault from None
            delay = min(
                fault.retry_after if fault.retry_after is not None else 0.5 * 2 ** (attempt - 1),
                MAX_RETRY_AFTER_S,
            )
            yield Retrying(attempt, attempts - 1, delay, fault.message)
            attempt += 1
            if wait(delay):
                return


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


def key_from_cmd(
    cmd: str | list[str], timeout_s: float, what: str = "provider.api_key_cmd"
) -> str | None:
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
        raise ProviderError(f"{what} failed ({type(err).__name__}): check the command.") from None
    return out.strip() or None
