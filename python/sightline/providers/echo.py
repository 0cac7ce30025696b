"""The built-in provider without a model: it echoes the user's text, calls no tools."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from sightline.providers.base import (
    Capabilities,
    ProviderBase,
    Reply,
    Request,
    StreamEvent,
    TextDelta,
)


def _last_user_text(request: Request) -> str:
    for message in reversed(request.messages):
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            return str(content)
        texts = [b["text"] for b in content if b.get("type") == "text"]
        if texts:
            return str(texts[0])
    return ""


@dataclass
class EchoProvider(ProviderBase):
    capabilities = Capabilities(choose_model=False, local=True)
    name: str = "echo"
    model: str = "echo"
    chunk: int = 16
    _stop: threading.Event = field(default_factory=threading.Event)

    def stream(self, request: Request, cancelled: Callable[[], bool]) -> Iterator[StreamEvent]:
        self._stop.clear()
        text = "echo: " + _last_user_text(request)
        for i in range(0, len(text), self.chunk):
            if cancelled() or self._stop.is_set():
                return
            yield TextDelta(text[i : i + self.chunk])
        yield Reply(content=[{"type": "text", "text": text}], stop_reason="end_turn")

    def prepare(self) -> None:
        pass

    def cancel(self) -> None:
        self._stop.set()

    def scope_refusal(self) -> str | None:
        return (
            "Change with Agent needs a model provider; the echo provider cannot change "
            "anything (set $ANTHROPIC_API_KEY or provider.name)"
        )

    def models(self) -> list[str]:
        return [self.model]
