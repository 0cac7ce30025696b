"""The core: one per Neovim. Holds the configuration and the session; no pynvim here."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from sightline import history, paths
from sightline.agent.session import Session
from sightline.config import CoreConfig
from sightline.editor import Editor
from sightline.errors import Refused
from sightline.tools.registry import default_registry

log = logging.getLogger(__name__)


class Core:
    def __init__(self, editor: Editor):
        self.editor = editor
        self.cfg = CoreConfig()
        self.session = Session(editor, self.cfg, os.getcwd(), default_registry())

    def configure(self, raw: dict[str, Any], workspace: str | None = None) -> None:
        self.cfg = CoreConfig.from_dict(raw)
        self.session.cfg = self.cfg
        self.session.autoaccept = self.cfg.autoaccept
        self.session._provider = None
        if workspace:
            self.set_workspace(workspace)
        if self.cfg.provider.name == "anthropic":
            from sightline.providers.anthropic_api import preload

            preload()

    def set_workspace(self, workspace: str) -> None:
        session = self.session
        if workspace == session.workspace:
            return
        session.workspace = workspace
        if session.conversation is not None and session.conversation.workspace != workspace:
            # History is keyed by workspace: a new root starts a new conversation file.
            session.conversation.close()
            session.conversation = None
            session.transcript.add_note(f"New conversation for {workspace}")

    def send(self, params: dict[str, Any]) -> dict[str, Any]:
        text = params.get("text")
        if not isinstance(text, str):
            raise Refused("send: text must be a string")
        if self.session.turn is None and isinstance(params.get("workspace"), str):
            self.set_workspace(params["workspace"])
        turn = self.session.send(text)
        return {"turn": turn.id, "status": self.session.status()}

    def history_list(self) -> list[dict[str, Any]]:
        summaries = history.list_conversations(paths.history_dir(), self.session.workspace)
        return [s.to_wire() for s in summaries]

    def history_open(self, path: str) -> dict[str, Any]:
        self.session.open(Path(path))
        return self.session.status()
