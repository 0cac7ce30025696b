"""The core: one per Neovim. Holds the configuration and the session; no pynvim here."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from sightline import chips, history, paths, scope
from sightline.agent.session import Session
from sightline.chips import reference_finder
from sightline.composer import ComposerCompletion
from sightline.config import ConfigError, CoreConfig
from sightline.context import ContextLimits
from sightline.editor import Editor
from sightline.errors import Refused
from sightline.mention_context import buffer_reader, context_parts
from sightline.providers import REGISTRY
from sightline.tools.registry import default_registry

log = logging.getLogger(__name__)


class Core:
    def __init__(self, editor: Editor):
        self.editor = editor
        self.cfg = CoreConfig.before_init()
        self.session = Session(editor, self.cfg, os.getcwd(), default_registry())
        self.completion = ComposerCompletion()

    def configure(self, raw: object, workspace: str | None = None) -> None:
        """Apply the Lua config table; a bad one is refused whole and changes nothing."""
        try:
            cfg = CoreConfig.from_dict(raw)
        except ConfigError as err:
            raise Refused(f"config: {err}") from None
        if cfg.provider.name not in REGISTRY:
            names = ", ".join(sorted(REGISTRY))
            raise Refused(f"config: provider.name: expected one of {names}")
        self.cfg = cfg
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
        session.transcript.finder = reference_finder(workspace)
        if session.conversation is not None and session.conversation.workspace != workspace:
            # History is keyed by workspace: a new root starts a new conversation file.
            session.conversation.close()
            session.conversation = None
            session.transcript.add_note(f"New conversation for {workspace}")

    def send(self, params: dict[str, Any]) -> dict[str, Any]:
        text = params.get("text")
        if not isinstance(text, str):
            raise Refused("send: text must be a string")
        if self.session.turn is not None:
            raise Refused("a turn is already running: wait for it or :Sightline stop")
        if isinstance(params.get("workspace"), str):
            self.set_workspace(params["workspace"])
        extra: list[str] = []
        selection, note, chip = None, None, None
        if scope.has_range(params):
            selection = self.selection(params)
            extra.append(scope.selection_block(selection))
            note = f"about {selection.title}"
            chip = {**selection.flat(), "file_path": selection.name}
            chip["attachment_id"] = chips.attachment_id(chip, "sel")
        extra.extend(self.mention_parts(text))
        named = chips.attachment_part(text, self.session.workspace, chip)
        if named:
            extra.append(named)
        turn = self.session.send(text, extra_parts=extra, scope=selection, note=note, chip=chip)
        return {"turn": turn.id, "status": self.session.status()}

    def mention_parts(self, text: str) -> list[str]:
        """The parts `@ext:<name>` and `@path` mentions add for the model (after the
        selection block); a mentioned file comes from its buffer when one is loaded."""
        limits = ContextLimits(self.cfg.max_file_bytes, self.cfg.max_total_bytes)
        reader = buffer_reader(self.editor)
        return context_parts(text, self.session.workspace, limits, read_file=reader)

    def selection(self, params: dict[str, Any]) -> scope.Selection:
        """Check the flat range in Neovim and read the selected text there (the request
        carries none). Refused before any turn starts; nothing is recorded."""
        if self.cfg.provider.name == "echo":
            raise Refused(
                "Change with Agent needs a model provider; the echo provider cannot change "
                "anything (set $ANTHROPIC_API_KEY or provider.name)"
            )
        flat = {k: params.get(k) for k in scope.RANGE_KEYS}
        info = self.editor.describe_range(flat)
        if "error" in info:
            raise Refused(f"sightline: {info['error']}")
        rng: dict[str, Any] = dict(info["range"])
        return scope.Selection(
            **{k: int(rng[k]) for k in scope.RANGE_KEYS},
            text=info["text"],
            name=info["name"],
            filetype=info["filetype"],
            title=info["title"],
        )

    def history_list(self) -> list[dict[str, Any]]:
        summaries = history.list_conversations(paths.history_dir(), self.session.workspace)
        return [s.to_wire() for s in summaries]

    def history_open(self, path: str) -> dict[str, Any]:
        self.session.open(Path(path))
        return self.session.status()
