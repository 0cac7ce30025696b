"""The core: one per Neovim. Holds the configuration and the session; no pynvim here."""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import dataclasses
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from sightline import providers
from sightline.agent import steering
from sightline.agent.checkpointing import KEEP_MAX_BYTES
from sightline.agent.session import Session
from sightline.domain import history, history_admin, images, narrator, paths, scope, skills
from sightline.domain import mentions as grammar
from sightline.domain.config import ConfigError, CoreConfig
from sightline.domain.errors import Refused
from sightline.editor.port import Editor
from sightline.mcp_client.manager import Manager
from sightline.mentions import clipboard
from sightline.mentions import images as image_mentions
from sightline.mentions import mcp_resources as mcp_mentions
from sightline.mentions import urls as url_mentions
from sightline.mentions.build_parts import ContextLimits
from sightline.mentions.composer import ComposerCompletion
from sightline.mentions.parts import buffer_reader, context_parts, editor_reader
from sightline.providers import REGISTRY, vision
from sightline.providers.base import Provider, ProviderError
from sightline.slash import catalog as slash_catalog
from sightline.slash import mcp_prompts
from sightline.slash.service import Context as SlashContext
from sightline.slash.service import SlashCommands
from sightline.tools import imaging
from sightline.tools.registry import default_registry
from sightline.ui import chips
from sightline.ui.chips import reference_finder

log = logging.getLogger(__name__)


_MODEL = re.compile(r"^[^\s\x00-\x1f\x7f]{1,200}$")

# The pane (one per tab page, lua/sightline/ui/pane/state.lua) a request came from: its
# conversation is `Core.session` while the request is handled. Each of pynvim's handler
# greenlets has its own context, and a turn's worker copies the one that started it; a
# thread that copied none (a server's note) sees the first pane, the one a single-pane
# user ever has.
MAIN_PANE = 1
MAX_PANES = 64
_PANE: contextvars.ContextVar[int] = contextvars.ContextVar("sightline_pane", default=MAIN_PANE)


def _user(record: dict[str, Any]) -> bool:
    return record.get("type") == "message" and record.get("role") == "user"


def _same_file(a: Path, b: str) -> bool:
    try:
        return a.resolve() == Path(b).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return False


class Core:
    def __init__(self, editor: Editor):
        self.editor = editor
        self.cfg = CoreConfig.before_init()
        # The conversations open at once, by the pane that shows each (MAIN_PANE first).
        self.sessions: dict[int, Session] = {}
        # The user's MCP servers: their tools join a turn's, their resources `@` mentions.
        self.mcp = Manager(self._mcp_note)
        # The user's `stdpath('config')` (sent by Neovim): where their prompts and skills are.
        self.config_dir: str | None = None
        self._add_session(MAIN_PANE, os.getcwd())
        atexit.register(self.mcp.stop_all)
        # `/` in the composer: built-ins, prompt files and other sources' commands.
        self.slash = SlashCommands(note=self._slash_note)
        self.slash.extra.append(
            lambda ctx: [
                slash_catalog.skill_command(s)
                for s in skills.active(ctx.workspace, ctx.config_dir or self.config_dir)
            ]
        )
        self.slash.extra.append(lambda ctx: mcp_prompts.commands(self.mcp, ctx.workspace))
        self.slash.extra.append(lambda ctx: self._agent_commands())
        self.slash.version = self._agent_commands_seq
        # A prompt file naming a model: its provider's list is fetched now, so sending it
        # finds the list there to check the model against (entry/slash.py).
        self.slash.wants_models = lambda: self.models(0)
        self.slash.starting = lambda ctx: self.mcp.starting(ctx.workspace)
        self.completion = ComposerCompletion(
            extra=lambda ws, token, items: mcp_mentions.complete(self.mcp, ws, token, items),
            slash=lambda ws, config, line: self.slash.complete_line(SlashContext(ws, config), line),
        )
        # Set once what the provider's first request needs is loaded (core.ping says so).
        self.preloaded = threading.Event()
        # Model lists per (provider, base_url): fetched once, off Neovim's thread.
        self._models: dict[tuple[str, str | None], list[str] | str] = {}
        self._fetches: dict[tuple[str, str | None], threading.Event] = {}
        self._models_lock = threading.Lock()
        self._notes: dict[tuple[str, str | None], dict[str, str]] = {}
        self._login: Any = None  # providers.copilot_login.Login, made on first use

    def keep_unsent(self) -> None:
        """Neovim quit: what was typed and not yet recorded is kept, in every tab's
        conversation (Session.keep_unsent)."""
        for session in list(self.sessions.values()):
            session.keep_unsent()

    def _add_session(self, pane: int, workspace: str) -> Session:
        session = Session(self.editor, self.cfg, workspace, default_registry())
        session.pane = pane
        session.autoaccept = self.cfg.autoaccept
        session.extra_tools = self.mcp.turn_tools
        # A queued message is sent in its own conversation, whichever thread ends the turn.
        session.dispatch = lambda text: self.in_pane(pane, lambda: self.send({"text": text}))
        session.skills = lambda: skills.active(session.workspace, self.config_dir)
        self.sessions[pane] = session
        return session

    @property
    def session(self) -> Session:
        """The conversation of the pane the request at hand came from (see _PANE)."""
        return self.sessions.get(_PANE.get()) or self.sessions[MAIN_PANE]

    @session.setter
    def session(self, session: Session) -> None:
        session.pane = _PANE.get()
        self.sessions[session.pane] = session

    @contextlib.contextmanager
    def bound(self, pane: int) -> Iterator[Session]:
        """Handle a request of pane `pane`: its conversation (a new one on its first
        request, in the workspace of the first pane's) is `session` meanwhile."""
        if pane not in self.sessions:
            if len(self.sessions) >= MAX_PANES:
                raise Refused(f"chats: at most {MAX_PANES} conversations are open at once")
            self._add_session(pane, self.sessions[MAIN_PANE].workspace)
        token = _PANE.set(pane)
        try:
            yield self.sessions[pane]
        finally:
            _PANE.reset(token)

    def in_pane(self, pane: int, fn: Callable[[], Any]) -> Any:
        with self.bound(pane):
            return fn()

    def chats(self) -> list[dict[str, Any]]:
        """The open conversations (`:Sightline chats`): pane, state, title, provider."""
        out = []
        for pane, session in sorted(self.sessions.items()):
            conv = session.conversation
            title = ""
            if conv is not None:
                names = history_admin.titles(paths.history_dir())
                title = names.get(conv.path.stem, "") or history.title_of(conv.records)
            out.append(
                {
                    "pane": pane,
                    "state": session.state(),
                    "title": title,
                    "provider": session.cfg.provider.name,
                    "model": session.provider.model,
                    "turns": sum(1 for r in (conv.records if conv else []) if _user(r)),
                }
            )
        return out

    def _mcp_note(self, note: narrator.Note) -> None:
        """A server failed or refused a tool: said once in the pane."""
        self.session.transcript.add_note(*note)
        self.session.ui.schedule()

    def _agent_commands(self) -> list[slash_catalog.Command]:
        """The slash commands an ACP agent announced (a provider offering `agent_commands`)."""
        provider = self.session.provider
        announced = getattr(provider, "agent_commands", None)
        if not callable(announced):
            return []
        name = str(getattr(provider, "agent_name", "") or provider.model)
        return slash_catalog.agent_commands(name, announced())

    def _agent_commands_seq(self) -> object:
        provider = self.session.provider
        seq = getattr(provider, "agent_commands_seq", None)
        return (id(provider), seq()) if callable(seq) else None

    def _slash_note(self, text: str) -> None:
        """A prompt file skipped (broken front matter, bounds): said once in the pane."""
        self.session.transcript.add_note(*narrator.prompt_skipped(text))
        self.session.ui.schedule()

    def _mcp_parts(self, found: list[grammar.Mention]) -> Callable[[int], list[str]] | None:
        """The `@mcp:` resources' and `@url:` pages' parts, read on the turn's worker (they
        wait on a server)."""
        if not any(m.kind in ("mcp", "url") for m in found):
            return None
        workspace, max_file, max_total = (
            self.session.workspace,
            self.cfg.max_file_bytes,
            self.cfg.max_total_bytes,
        )
        net = self.cfg.network

        def late(used: int) -> list[str]:
            remaining = max(0, max_total - used)
            out = mcp_mentions.parts(self.mcp, workspace, found, max_file, remaining)
            remaining -= sum(len(p.encode("utf-8", "replace")) for p in out)
            out += url_mentions.parts(found, net, max_file, max(0, remaining), self._mcp_note)
            return out

        return late

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
        for session in self.sessions.values():
            session.cfg = self.cfg
            session.autoaccept = self.cfg.autoaccept
            session.drop_provider()
        self.mcp.configure(
            cfg.mcp_servers, cfg.mcp_start_timeout_ms, cfg.mcp_call_timeout_ms, cfg.sandbox
        )
        if workspace:
            self.set_workspace(workspace)
        main = self.sessions[MAIN_PANE]
        self.preloaded = providers.preload(cfg.provider, lambda: main.provider)
        self._warm_scan()

    def login(self, name: str) -> None:
        """Sign in to a provider that signs in (copilot's device flow) on a worker thread;
        the pane says the code, the address and the outcome."""
        if name != "copilot":
            raise Refused(
                f"login: {name!r} takes an API key, not a sign-in; only copilot signs in "
                "(:help sightline-providers)"
            )
        from sightline.providers.copilot_login import Login

        if self._login is None:
            self._login = Login()
        prov = self.cfg.provider
        host = prov.host if prov.name == "copilot" else None

        def say(note: narrator.Note) -> None:
            self.session.transcript.add_note(*note)
            self.session.ui.schedule()

        def done() -> None:
            # The next request finds the new sign-in (a turn that runs keeps its provider).
            if self.session.turn is None:
                self.session.drop_provider()

        if not self._login.start(host, say, done):
            raise Refused("login: a sign-in is already waiting for its code")

    def cancel_login(self) -> bool:
        """`:Sightline stop` while a sign-in waits for its code: it ends, nothing stored."""
        return self._login is not None and bool(self._login.cancel())

    def set_model(self, name: str) -> None:
        """Use model `name` from the next request on (until the next setup())."""
        name = name.strip()
        if not _MODEL.match(name):
            raise Refused("model: expected a model name (no spaces or control characters)")
        provider = self.session.provider
        if callable(getattr(provider, "set_option", None)):
            self._set_agent_option("model", name)  # an ACP agent's own choice of models
            return
        if not provider.capabilities.choose_model:
            raise Refused(
                f"model: the {provider.name} provider has one model, {provider.model}; "
                "set provider.name"
            )
        if self.session.turn is not None:
            raise Refused("model: a turn is running; wait for it or :Sightline stop")
        self.cfg = dataclasses.replace(
            self.cfg, provider=dataclasses.replace(self.cfg.provider, model=name)
        )
        self.session.cfg = self.cfg
        self.session.drop_provider()
        self.session.ui.schedule()

    def _set_agent_option(self, kind: str, name: str) -> str:
        if self.session.turn is not None:
            raise Refused(f"{kind}: a turn is running; wait for it or :Sightline stop")
        chosen = str(self.session.provider.set_option(kind, name))  # type: ignore[attr-defined]
        self.session.ui.schedule()
        return chosen

    def agent_mode(self, name: str | None) -> dict[str, Any]:
        """An ACP agent's own modes (`:Sightline mode`): set one by name, or list them."""
        provider = self.session.provider
        values = getattr(provider, "option_values", None)
        if not callable(values):
            raise Refused(
                f"mode: the {provider.name} provider has no modes of its own "
                "(plan mode is :Sightline plan)"
            )
        if name:
            if not _MODEL.match(name.strip()):
                raise Refused("mode: expected a mode name (no spaces or control characters)")
            self._set_agent_option("mode", name.strip())
        current = getattr(provider, "agent_mode", None) or {}
        return {"modes": values("mode") or [], "mode": current.get("id")}

    def agent_sessions(self) -> list[dict[str, str]]:
        """An ACP agent's own sessions of this workspace (`:Sightline sessions`)."""
        listing = getattr(self.session.provider, "agent_sessions", None)
        if not callable(listing):
            raise Refused(
                f"sessions: the {self.session.provider.name} provider has none of its own"
            )
        return list(listing(self.session.workspace))

    def agent_resume(self, session_id: str) -> dict[str, Any]:
        """Resume one of the agent's sessions: a new conversation holding its replayed
        history, continued in that session."""
        provider = self.session.provider
        resume = getattr(provider, "resume_records", None)
        if not callable(resume):
            raise Refused(f"sessions: the {provider.name} provider has none of its own")
        if self.session.turn is not None:
            raise Refused("sessions: a turn is running; wait for it or :Sightline stop")
        records = resume(self.session.workspace, session_id, self.session.editor.servername())
        conv = history.Conversation.create(
            self.session.history_dir,
            self.session.workspace,
            provider=self.cfg.provider.name,
            model=provider.model,
        )
        for record in records:
            conv.append(record)
        path = conv.path
        conv.close()
        return self.history_open(str(path))

    def models(self, wait_s: float, *, join: bool = False) -> dict[str, Any]:
        """The provider's model list, from the cache or a fetch on a worker thread (waited
        for at most `wait_s`); `loading` while it is not there yet.  `join`: a fetch already
        under way is waited for too (else only the first ask waits)."""
        prov = self.cfg.provider
        current = self.session.provider.model
        values = getattr(self.session.provider, "option_values", None)
        if callable(values):  # an ACP agent's models, as its session offers them
            model = getattr(self.session.provider, "agent_model", None) or current
            return {"models": values("model") or [], "model": model, "loading": False}
        if not self.session.provider.capabilities.choose_model:
            return {"models": [current], "model": current, "loading": False}
        key = (prov.name, prov.base_url)
        with self._models_lock:
            done = self._fetches.get(key)
            # Only the first ask waits for the list: while a fetch hangs, or after one
            # failed, each later <Tab> answers at once with what is known (loading, the error).
            wait = (done is None or join) and key not in self._models
            if done is None:
                done = self._fetches[key] = threading.Event()
                provider = self.session.provider
                threading.Thread(
                    target=self._fetch_models, args=(key, provider, done), daemon=True
                ).start()
        if wait:
            done.wait(wait_s)
        with self._models_lock:
            found = self._models.get(key)
        out: dict[str, Any] = {"model": current, "loading": found is None}
        if isinstance(found, str):
            out["error"] = found
            found = None
        models = list(found or [])
        if current not in models:
            models.insert(0, current)
        out["models"] = models
        with self._models_lock:
            notes = self._notes.get(key)
        if notes:
            out["notes"] = notes
        return out

    def _fetch_models(
        self, key: tuple[str, str | None], provider: Provider, done: threading.Event
    ) -> None:
        try:
            result: list[str] | str = list(provider.models())
            notes: Any = getattr(provider, "model_notes", dict)()
            with self._models_lock:
                self._notes[key] = notes if isinstance(notes, dict) else {}
        except ProviderError as err:
            result = err.message
        except Exception as err:
            result = type(err).__name__
            with self._models_lock:
                self._fetches.pop(key, None)  # a failed fetch is tried again next time
        with self._models_lock:
            self._models[key] = result
        done.set()

    def _warm_scan(self) -> None:
        """An ACP agent writes files itself: its turns' before/after scan reads the whole
        workspace once, then only what changed (providers/acp/snapshot.py). That first pass
        starts now, in the background, so that it does not land on the first turn; the
        texts it reads are kept for the checkpoints (agent/checkpointing.py)."""
        if self.cfg.provider.name != "acp":
            return
        root, keep = self.session.workspace, self.session.checkpoints.keeper(KEEP_MAX_BYTES)

        def start() -> None:
            # Off Neovim's loop: the ACP package is the heavy import (providers.HEAVY_MODULES).
            from sightline.providers.acp import snapshot

            snapshot.warm(root, keep)

        threading.Thread(target=start, name="scan-warm-start", daemon=True).start()

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
            session.transcript.add_note(*narrator.new_conversation(workspace))
        self._warm_scan()

    def send(
        self, params: dict[str, Any], *, shown: str | None = None, model: str | None = None
    ) -> dict[str, Any]:
        """Start a turn.  `shown`: what the user typed when `text` is what it expanded to
        (a `/` prompt): the transcript shows it, the expanded text folded under it.
        `model`: the turn runs on that model (a prompt file's; never queued: refused while
        a turn runs)."""
        text = params.get("text")
        if not isinstance(text, str):
            raise Refused("send: text must be a string")
        edit_at = params.get("edit_at")
        if model and self.session.turn is not None:
            raise Refused("a turn is running: wait for it or :Sightline stop")
        if self.session.turn is not None and not scope.has_range(params) and edit_at is None:
            # Typed while a turn runs: kept, sent when it ends (or steered in).
            qid = steering.queue(self.session, text, bool(params.get("steer")))
            if qid is not None:
                return {"queued": qid, "status": self.session.status()}
        if self.session.turn is not None:  # a Change with Agent or an edit waits for it
            raise Refused("a turn is already running: wait for it or :Sightline stop")
        if isinstance(params.get("workspace"), str):
            self.set_workspace(params["workspace"])
        extra: list[str] = []
        selection, note, chip = None, None, None
        if scope.has_range(params):
            selection = self.selection(params)
            extra.append(scope.selection_block(selection))
            note = narrator.about(selection.title)
            chip = {**selection.flat(), "file_path": selection.name}
            chip["attachment_id"] = chips.attachment_id(chip, "sel")
        found = grammar.parse_mentions(text)  # once per send: every part below reads these
        pictures = self.images(found, text)  # refused before anything is sent or recorded
        extra.extend(self.mention_parts(found))
        named = chips.attachment_part(found, self.session.workspace, chip)
        if named:
            extra.append(named)
        turn = self.session.send(
            text,
            extra_parts=extra,
            scope=selection,
            note=note,
            chip=chip,
            late=self._mcp_parts(found),
            shown=shown,
            images=[p.block() for p in pictures],
            edit_at=edit_at if isinstance(edit_at, int) else None,
            model=model,
        )
        return {"turn": turn.id, "status": self.session.status()}

    def images(self, found: list[grammar.Mention], text: str) -> list[images.Image]:
        """The message's images (`@image:`, dropped paths), ready to send; Refused when the
        model cannot look at images or one is not an image it can be sent."""
        workspace = self.session.workspace
        if not image_mentions.wanted(found, text, workspace):
            return []
        provider = self.session.provider
        if not vision.sees_images(provider):
            raise Refused(vision.refusal(provider))
        attached = image_mentions.attach(found, text, workspace, imaging.DEFAULT_LIMITS)
        # A provider that knows its model's image limits (copilot: from its model list).
        limits = getattr(provider, "image_refusal", None)
        why = limits(attached) if callable(limits) else None
        if isinstance(why, str):
            raise Refused(f"sightline: {why}")
        return attached

    def mention_parts(self, text: str | list[grammar.Mention]) -> list[str]:
        """The parts `@ext:<name>` and `@path` mentions add for the model (after the
        selection block); a mentioned file comes from its buffer when one is loaded."""
        limits = ContextLimits(self.cfg.max_file_bytes, self.cfg.max_total_bytes)
        reader = buffer_reader(self.editor)
        return context_parts(
            text,
            self.session.workspace,
            limits,
            read_file=reader,
            read_editor=editor_reader(self.editor, self.session.workspace),
        )

    def selection(self, params: dict[str, Any], *, scoped: bool = True) -> scope.Selection:
        """Check the flat range in Neovim and read the selected text there (the request
        carries none). Refused before any turn starts; nothing is recorded. `scoped`: for
        a turn held to the selection (a prompt's `${selection}` only quotes it)."""
        why = self.session.provider.scope_refusal() if scoped else None
        if why:
            raise Refused(f"sightline: {why}")
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
        names = history_admin.titles(paths.history_dir())
        return [{**s.to_wire(), "title": names.get(s.path.stem, s.title)} for s in summaries]

    def history_preview(self, path: str) -> list[str]:
        return history_admin.preview(paths.history_dir(), path)

    def history_rename(self, path: str, title: str) -> str:
        return history_admin.rename(paths.history_dir(), path, title)

    def paste(self) -> dict[str, str]:
        """`:Sightline paste`: the clipboard's image as an `@image:` token and its chip."""
        pasted = clipboard.paste(imaging.DEFAULT_LIMITS)
        return {"token": pasted.token, "chip": pasted.chip}

    def history_delete(self, path: str) -> None:
        history_admin.delete(paths.history_dir(), path)
        self.session.checkpoints.forget(Path(path).stem)  # its checkpoints go with it

    def history_open(self, path: str, branch: str | None = None) -> dict[str, Any]:
        """Open a conversation of the history (at its last active branch, or `branch`)."""
        current = self.session.conversation
        same = current is not None and _same_file(current.path, path)
        for pane, other in self.sessions.items():
            held = other.conversation
            if other is not self.session and held is not None and _same_file(held.path, path):
                raise Refused(
                    f"history: this conversation is open in another tab's pane ({pane}): "
                    ":Sightline chats switches to it"
                )
        if not same:
            self.session.open(Path(path))
        if branch is not None:
            steering.switch(self.session, branch)
        return self.session.status()
