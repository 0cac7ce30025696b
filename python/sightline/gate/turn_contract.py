"""The turn contract: the running turn as the tools, the gate, the MCP client and ACP see it.

agent/turn.py's Turn and agent/session.py's Session implement these Protocols; the code
below the agent names only them, so it never imports the agent
(tests/unit/test_package_layers.py) and can be driven by a plain object in a test.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from sightline.domain.config import CoreConfig
    from sightline.domain.history import Conversation
    from sightline.domain.scope import Selection
    from sightline.editor.port import Editor
    from sightline.gate.approvals import Approvals
    from sightline.gate.decisions import Gate
    from sightline.ui.push import Ui
    from sightline.ui.transcript import Transcript


@dataclass(frozen=True)
class ToolResult:
    """What a tool, or a write the gate decided, tells the model."""

    content: str
    is_error: bool = False
    # The reason a failed call's line gives the user, when the model's wording (`content`)
    # would not speak to them (worded in domain/narrator.py); recorded beside the result.
    shown: str | None = None
    # Image references (domain/images.py) the result carries (read_file on a picture): sent
    # after its text to a model that can look at images, left out for one that cannot.
    images: tuple[dict[str, Any], ...] = ()


class Session(Protocol):
    """The conversation a turn belongs to."""

    plan: list[dict[str, Any]]
    mode: str

    @property
    def workspace(self) -> str: ...
    @property
    def editor(self) -> Editor: ...
    @property
    def cfg(self) -> CoreConfig: ...
    @property
    def gate(self) -> Gate: ...
    @property
    def approvals(self) -> Approvals: ...
    @property
    def transcript(self) -> Transcript: ...
    @property
    def ui(self) -> Ui: ...
    @property
    def autoaccept(self) -> bool: ...
    @property
    def conversation(self) -> Conversation | None: ...
    @property
    def pane(self) -> int:
        """The pane that shows it (core.py's registry; 1 for a single-pane user)."""
        ...

    def record(self, record: dict[str, Any]) -> None: ...
    def account(self, usage: dict[str, int]) -> None:
        """Count the tokens (`input`, `output`, `cache_read`, `cache_write`) of a turn the
        provider ran itself (an ACP agent's)."""


class Turn(Protocol):
    """One turn: its scope, its cancellation, and the session's editor and gate."""

    scope: Selection | None
    partial: str

    @property
    def id(self) -> int: ...
    @property
    def session(self) -> Session: ...
    @property
    def lock(self) -> threading.Lock: ...
    @property
    def workspace(self) -> str: ...
    @property
    def editor(self) -> Editor: ...
    @property
    def gate(self) -> Gate: ...

    def cancelled(self) -> bool: ...
    def on_cancel(self, callback: Callable[[], None]) -> None: ...
