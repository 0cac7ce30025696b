"""Provider `acp`: any Agent Client Protocol agent (Gemini CLI, Claude, Codex, …) behind the
pane, built on the official SDK (`agent-client-protocol`, import name `acp`).

The seam with the session (providers/base.py `Provider.run_turn`, `capabilities.runs_turns`):
an ACP agent runs its own tool loop, so this provider runs a whole turn instead of streaming
one model request; the built-in turn loop (agent/loop.py) is not used. Everything the agent
asks of the editor comes back through client.py, where the gate, the workspace confinement
and the scope are enforced. What it shows in the pane is worded by domain/narrator.py, as
the built-in loop's is.

The agent starts on the first send, in the workspace, with sightline's MCP server (reveal,
chips, go_to_position) in `mcpServers`; it is restarted on the next send after a crash.
"""

from __future__ import annotations

import concurrent.futures
import logging
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sightline.domain import narrator
from sightline.domain.config import ProviderConfig
from sightline.domain.errors import Refused
from sightline.editor.port import EditorError
from sightline.gate import checkpoint
from sightline.providers.acp import auth, modes, options, presets, snapshot
from sightline.providers.acp.client import (
    MCP_SERVER,
    SightlineClient,
    TurnContext,
    _lines_record,
)
from sightline.providers.acp.prompt import decisions_block, has_images, prompt_blocks
from sightline.providers.acp.runtime import AgentProcess, LoopThread
from sightline.providers.acp.transport import CheckedTransport
from sightline.providers.base import (
    Capabilities,
    ProviderBase,
    ProviderError,
    Request,
    StreamEvent,
)

if TYPE_CHECKING:
    from acp.client.connection import ClientSideConnection
    from acp.schema import InitializeResponse, SessionModeState

    from sightline.gate.turn_contract import Session, Turn

log = logging.getLogger(__name__)

# Mode ids (or names) agents use for "look, don't touch".
READ_ONLY_MODES = ("plan", "read-only", "readonly", "read_only", "ask")
STOP_GRACE_S = 2.0
PACKAGE_ROOT = str(Path(__file__).resolve().parents[3])
# Why a question the agent left waiting when its turn ended was rejected.
_TURN_ENDED = "the agent ended its turn before this was decided"


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("sightline")
    except metadata.PackageNotFoundError:
        return "0"


class AcpProvider(ProviderBase):
    name = "acp"
    capabilities = Capabilities(runs_turns=True)

    def __init__(self, cfg: ProviderConfig):
        self.cfg = cfg
        self.spec = presets.resolve(cfg.agent)
        self.model = self.spec.name
        self.client = SightlineClient()
        self._loop: LoopThread | None = None
        self._proc: AgentProcess | None = None
        self._conn: ClientSideConnection | None = None
        self.init: InitializeResponse | None = None
        self.session_id: str | None = None
        self._bound: str | None = None  # the conversation id the agent session belongs to
        self._modes: SessionModeState | None = None
        self._normal_mode: str | None = None
        self._mode_refusal: str | None = None  # why no normal turn can run in its modes
        self._mcp_checked = False  # whether this agent session's MCP server was looked for
        self._step = "initialize"  # what the agent was last asked while getting ready
        self.authenticated: str | None = None  # the auth method sightline logged it in with
        self._pending_options: dict[str, str] = {}  # chosen before the session opened

    @property
    def agent_name(self) -> str:
        """What the bar names the agent: the name its initialize answer gave (agentInfo.name)
        once it has; before, a preset's name, and nothing for an agent of one's own command
        (its command, `python3` or `node`, would name the interpreter, not the agent)."""
        info = self.init.agent_info if self.init is not None else None
        if info is not None and info.name:
            return info.name
        return "" if self.cfg.agent is not None and self.cfg.agent.cmd else self.spec.name

    @property
    def agent_mode(self) -> dict[str, Any] | None:
        """The agent's current mode as the bar shows it: its name, and whether it runs
        writes and commands without asking (then only because the user named it)."""
        current = self.client.current_mode
        if not current:
            return None
        name = current
        for mode in self._modes.available_modes if self._modes else []:
            if mode.id == current:
                name = mode.name or current
        return {"id": current, "name": name, "bypasses": modes.bypasses(current, name)}

    @property
    def agent_options(self) -> list[dict[str, str]]:
        """The agent's session config options but its mode (shown as agent_mode): model,
        thought level, any other select, each with its current value."""
        return [o.view() for o in self.client.config_options if o.category != "mode"]

    @property
    def agent_model(self) -> str | None:
        """The agent's current model, where it offers a choice of models."""
        opt = options.find(self.client.config_options, "model")
        return opt.value_name() if opt is not None else None

    def option_values(self, kind: str) -> list[str] | None:
        """What `:Sightline model` / `:Sightline mode` list: the agent's values of that
        option (its modes, for an agent that has modes but no config option for them); None
        while the agent has not said (it starts on the first message)."""
        opt = options.find(self.client.config_options, kind)
        if opt is not None:
            return [value for value, _ in opt.values]
        if kind == "mode" and self._modes is not None:
            return [m.id for m in self._modes.available_modes]
        return None

    def set_option(self, kind: str, wanted: str) -> str:
        """Switch the agent's `kind` option (model, mode, thought_level or an option's id) to
        `wanted`, at once when its session is open (else on the next message); its name.
        A mode chosen here is the user's by name, as provider.agent_mode is."""
        opt = options.find(self.client.config_options, kind)
        if opt is None and kind == "mode" and self._modes is not None:
            values = tuple((m.id, m.name or m.id) for m in self._modes.available_modes)
            opt = options.Option("mode", "Mode", "mode", self.client.current_mode or "", values)
        if opt is None:
            known = "once the agent has started (send a message first)"
            if self.session_id is not None:
                known = f"the agent {self.agent_name!r} offers no choice of {kind}"
            raise Refused(f"{kind}: {known}")
        value = options.choose(opt, wanted)
        if kind == "mode":
            self._choose_mode(value)
        if self._loop is not None and self._conn is not None and self.session_id is not None:
            try:
                self._loop.call(self._apply_option(opt, value), self._timeout())
            except Refused:
                raise
            except Exception as err:
                raise Refused(f"{kind}: the agent refused {value!r}: {err}") from None
        else:
            self._pending_options[opt.id] = value
        return dict(opt.values).get(value, value)

    def _choose_mode(self, value: str) -> None:
        self.client.chosen_mode = value
        state = self._modes
        available = [modes.Mode(m.id, m.name) for m in state.available_modes] if state else []
        if any(m.id == value for m in available):
            self._normal_mode, self._mode_refusal = value, None

    async def _apply_option(self, opt: options.Option, value: str) -> None:
        assert self._conn is not None and self.session_id is not None
        is_config = any(o.id == opt.id for o in self.client.config_options)
        if is_config:
            got = await self._conn.set_config_option(
                config_id=opt.id, session_id=self.session_id, value=value
            )
            if got is not None and got.config_options:
                self.client.config_options = options.of(got.config_options)
        else:
            await self._conn.set_session_mode(session_id=self.session_id, mode_id=value)
        if opt.category == "mode":
            self.client.current_mode = value

    # -- the Provider protocol -------------------------------------------------------------

    def prepare(self) -> None:
        why = self.spec.missing()
        if why:
            raise ProviderError(why)

    def stream(self, request: Request, cancelled: Callable[[], bool]) -> Iterator[StreamEvent]:
        raise ProviderError("the acp provider runs whole turns (run_turn), not requests")

    def cancel(self) -> None:
        """`session/cancel` for the turn in progress; never waits (called on Neovim's loop)."""
        conn, sid, loop = self._conn, self.session_id, self._loop
        if conn is not None and sid is not None and loop is not None:
            loop.submit(_quiet(conn.cancel(session_id=sid)))

    def scope_refusal(self) -> str | None:
        """Why Change with Agent cannot keep its guarantee with this agent, or None."""
        if self.spec.client_writes:
            return None
        # Its first clause is what a one-line message shows (lua/sightline/ui/message.lua).
        return (
            f"Change with Agent is off for {self.spec.name!r}: this ACP agent writes files "
            "to disk itself, not through sightline, so a change could not be held to the "
            "selection (use the gemini agent or the anthropic provider)"
        )

    def agent_commands(self) -> list[tuple[str, str, str]]:
        """The slash commands the agent announced for its session (name, description,
        input hint), newest list; none before its session starts."""
        return list(self.client.commands)

    def agent_commands_seq(self) -> int:
        """Changes with each list the agent announces."""
        return self.client.commands_seq

    def close(self) -> None:
        self.client.commands = []
        proc, loop = self._proc, self._loop
        self._proc = self._conn = None
        self.session_id = None
        if proc is not None:
            proc.kill()
        if loop is not None:
            loop.stop()
        self._loop = None

    # -- a turn ----------------------------------------------------------------------------

    def run_turn(self, turn: Turn, user: dict[str, Any]) -> str:
        session = turn.session
        loop = self._loop or LoopThread()
        self._loop = loop
        files = checkpoint.files_of(turn)  # the turn's checkpoint keeps what the scan hashes
        keep = files.keep if files is not None else None
        before = snapshot.take(session.workspace, keep=keep)
        ctx = TurnContext(turn, self.spec.client_writes)
        self.client.ctx = ctx
        self.client.changed = session.ui.schedule
        self.client.commands_changed = session.ui.slash_changed
        try:
            servername = turn.editor.servername()
            loop.call(self._ready(session, servername), self._timeout())
            if turn.cancelled():
                return "stopped"
            prompt_caps = (
                self.init.agent_capabilities.prompt_capabilities
                if self.init and self.init.agent_capabilities
                else None
            )
            embedded = bool(prompt_caps and prompt_caps.embedded_context)
            takes_images = bool(prompt_caps and prompt_caps.image)
            if has_images(user) and not takes_images:
                # Known only once the agent has started: refused before the prompt is sent.
                raise ProviderError(
                    f"the ACP agent {self.spec.name!r} does not take images "
                    "(its promptCapabilities.image is off); nothing was sent to it"
                )
            blocks = prompt_blocks(user, session.workspace, embedded, takes_images)
            told, self.client.decisions = self.client.decisions, []
            if told:
                blocks.insert(0, decisions_block(told))
            assert self._conn is not None and self.session_id is not None
            future = loop.submit(self._conn.prompt(session_id=self.session_id, prompt=blocks))
            response = self._wait(turn, future)
            if response is None:
                return "stopped"
            self.client.flush_thought(ctx)
            self.client.flush_text(ctx)
            self.client.flush_unasked(ctx)
            self._account(session, response)
            if response.stop_reason == "max_tokens":
                session.transcript.add_note(*narrator.token_limit(None))
            elif response.stop_reason == "refusal":
                session.transcript.add_note(*narrator.agent_refused())
            self._check_mcp(session, servername)
            return "stopped" if response.stop_reason == "cancelled" else "done"
        except concurrent.futures.TimeoutError:
            # Before OSError, of which TimeoutError is a kind: a hung agent has not crashed.
            tail = self._proc.tail() if self._proc is not None else ""
            self._reset()
            session.gate.reject_all("the agent did not answer")
            raise ProviderError(
                no_answer_words(self.spec.name, self._step, self._timeout(), tail)
            ) from None
        except (ConnectionError, OSError, EOFError) as err:
            raise ProviderError(self._crashed(session, err)) from None
        except ProviderError:
            raise
        except Exception as err:
            from acp import RequestError

            if isinstance(err, RequestError):
                raise ProviderError(f"the ACP agent {self.spec.name!r}: {err}") from None
            raise
        finally:
            self.client.ctx = None
            ctx.finish(_TURN_ENDED)
            ctx.terminals.close_all(ctx)  # none outlives its turn
            if not turn.cancelled():
                self.client.flush_thought(ctx)
                self.client.flush_text(ctx)
            self._bypassed(session, turn, before, ctx)

    def _account(self, session: Session, response: Any) -> None:
        """The turn's tokens, where the agent reports them (PromptResponse.usage): in the bar,
        the footer and the history, as a built-in reply's are."""
        usage = getattr(response, "usage", None)
        if usage is None:
            return
        counts = {
            "input": usage.input_tokens,
            "output": usage.output_tokens,
            "cache_read": usage.cached_read_tokens or 0,
            "cache_write": usage.cached_write_tokens or 0,
        }
        session.account(counts)
        session.record({"type": "acp", "event": "usage", "usage": counts})

    def _timeout(self) -> float:
        return max(5.0, self.cfg.timeout_ms / 1000)

    def _wait(self, turn: Turn, future: concurrent.futures.Future[Any]) -> Any:
        stopped_at: float | None = None
        while True:
            try:
                return future.result(timeout=0.05)
            except concurrent.futures.TimeoutError:
                pass
            if turn.cancelled():
                stopped_at = stopped_at or time.monotonic()
                # The agent answers a cancel with stopReason "cancelled"; one that does not
                # is not waited for (the turn has ended already).
                if time.monotonic() - stopped_at > STOP_GRACE_S:
                    future.cancel()
                    return None

    def _crashed(self, session: Session, err: BaseException) -> str:
        proc = self._proc
        code = None
        if proc is not None and self._loop is not None:
            try:
                code = self._loop.call(proc.wait_exit(1.0), 5.0)
            except Exception:
                code = proc.proc.returncode
        tail = proc.tail() if proc is not None else ""
        caps = self.init.agent_capabilities if self.init else None
        resumable = bool(caps and caps.load_session)
        self._reset()
        session.gate.reject_all("the agent exited")
        what = f"exited (code {code})" if code is not None else f"lost its connection ({err})"
        return lost_words(self.spec.name, what, resumable, tail)

    def _check_mcp(self, session: Session, servername: str) -> None:
        """Once per agent session: say so when the agent did not start sightline's MCP server
        (reveal would silently be missing). Agents start their MCP servers at session setup."""
        if self._mcp_checked or not servername or self._proc is None:
            return
        self._mcp_checked = True
        if mcp_running(self._proc.proc.pid) is not False:
            return
        note = narrator.agent_without_mcp(self.spec.name, self.spec.name == "gemini")
        session.transcript.add_note(*note)

    def _reset(self) -> None:
        if self._proc is not None:
            self._proc.kill()
        self._proc = self._conn = None
        self.session_id = None
        self._bound = None

    def _bypassed(
        self, session: Session, turn: Turn, before: snapshot.Snapshot, ctx: TurnContext
    ) -> None:
        """Name the files that changed on disk during the turn without going through the gate."""
        try:
            files = checkpoint.files_of(turn)
            after = snapshot.take(session.workspace, keep=files.keep if files else None)
        except Exception:
            log.exception("workspace snapshot failed")
            return
        written = {workspace_rel(session.workspace, p) for p in ctx.written}
        permitted = {workspace_rel(session.workspace, p) for p in ctx.permitted}
        changed = [p for p in snapshot.changed(before, after) if p not in written]
        paths = [p for p in changed if p not in permitted]
        if not (before.complete and after.complete):
            session.transcript.add_note(*narrator.bypass_unchecked())
        allowed = [p for p in changed if p in permitted]
        if allowed:
            # Written by the agent after the user allowed it: its buffers show it now.
            self._sync_buffers(turn, allowed)
        if not paths:
            return
        if files is not None:
            ws = os.path.realpath(session.workspace)
            for p in paths:
                old, new = before.files.get(p), after.files.get(p)
                was = old[1] or checkpoint.MISSING if old else None
                now = new[1] or checkpoint.MISSING if new else None
                files.wrote_itself(os.path.join(ws, p), p, was, now)
        lines = narrator.bypassed(paths)
        kept = self._sync_buffers(turn, paths)
        if kept:
            lines += narrator.bypassed_kept(kept)
        session.transcript.add_lines(lines)
        session.record(_lines_record("bypass", lines, paths=paths))
        session.ui.event("SightlineAcpBypass", {"turn": turn.id, "paths": paths})

    def _sync_buffers(self, turn: Turn, paths: list[str]) -> list[str]:
        """The open buffers of files the agent wrote itself show what it wrote (found by
        content, so a stat that hides the write does not matter); those holding unsaved
        changes are kept and returned."""
        ws = Path(os.path.realpath(turn.session.workspace))
        try:
            kept = turn.editor.sync_files([str(ws / p) for p in paths])
        except EditorError as err:
            log.warning("the buffers of the agent's writes were not brought up to date: %s", err)
            return []
        ws_name = turn.session.workspace
        return [workspace_rel(ws_name, k["path"]) for k in kept if k["disk"] == "conflict"]

    # -- the agent and its session (on the loop) -------------------------------------------

    async def _ready(self, session: Session, servername: str) -> None:
        if self._proc is None or not self._proc.alive or self._conn is None:
            self._reset()
            self._step = "initialize"
            await self._start(session.workspace)
        conv = session.conversation
        conv_id = conv.id if conv is not None else None
        if self.session_id is None or self._bound != conv_id:
            self._step = "session/new"
            await self._open_session(session, servername)
            self._bound = conv_id
        for config_id, value in list(self._pending_options.items()):
            self._step = "session/set_config_option"
            opt = next((o for o in self.client.config_options if o.id == config_id), None)
            if opt is not None:
                await self._apply_option(opt, value)
            self._pending_options.pop(config_id, None)
        self._step = "session/set_mode"
        await self._set_mode(session.mode)

    async def _start(self, cwd: str) -> None:
        from acp import PROTOCOL_VERSION, connect_to_agent
        from acp.schema import ClientCapabilities, FileSystemCapabilities, Implementation

        try:
            self._proc = await AgentProcess.spawn(self.spec.cmd, self.spec.environment(), cwd)
        except OSError as err:
            raise ProviderError(
                f"could not start the ACP agent {self.spec.name!r}: {err}"
            ) from None
        proc = self._proc.proc
        assert proc.stdin is not None and proc.stdout is not None
        # Messages, not bytes: a malformed line fails alone instead of ending the connection.
        transport = CheckedTransport(proc.stdout, proc.stdin)
        self._conn = connect_to_agent(self.client, transport)  # type: ignore[arg-type]
        caps = ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
        )
        self.init = await self._conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=caps,
            client_info=Implementation(name="sightline", title="sightline", version=_version()),
        )

    def _mcp_servers(self, servername: str) -> list[Any]:
        from acp.schema import McpServerStdio

        if not servername:
            return []
        return [
            McpServerStdio(
                name=MCP_SERVER,
                command=sys.executable,
                args=["-c", mcp_boot(), "--server", servername],
                env=[],
            )
        ]

    async def _open_session(self, session: Session, servername: str) -> None:
        assert self._conn is not None
        self._mcp_checked = False
        servers = self._mcp_servers(servername)
        old = self._recorded_session(session)
        caps = self.init.agent_capabilities if self.init else None
        if old and caps and caps.load_session:
            self.client.loading = True
            try:
                loaded = await self._conn.load_session(
                    cwd=session.workspace, session_id=old, mcp_servers=servers
                )
                self.session_id = old
                self._remember_modes(loaded.modes if loaded else None)
                self.client.config_options = options.of(loaded.config_options if loaded else None)
                session.transcript.add_note(*narrator.agent_resumed(old))
                return
            except Exception as err:
                log.info("session/load of %s failed: %s", old, err)
            finally:
                self.client.loading = False
        created = await self._new_session(session.workspace, servers)
        self.session_id = created.session_id
        self._remember_modes(created.modes)
        self.client.config_options = options.of(created.config_options)
        if old or _has_history(session):
            session.transcript.add_note(*narrator.agent_new_session())
        session.record(
            {
                "type": "acp",
                "event": "session",
                "agent": self.spec.name,
                "session_id": created.session_id,
            }
        )

    async def _new_session(self, cwd: str, servers: list[Any]) -> Any:
        """`session/new`; an agent that answers it needs a login is authenticated with the
        first of its advertised env_var methods whose keys its process has, then asked again
        (providers/acp/auth.py); one that needs the user at a terminal is refused with how."""
        from acp import RequestError

        assert self._conn is not None
        try:
            return await self._conn.new_session(cwd=cwd, mcp_servers=servers)
        except RequestError as err:
            if err.code != auth.AUTH_REQUIRED:
                raise
        methods = auth.methods_of(self.init.auth_methods if self.init else None)
        method = auth.usable(methods, {**os.environ, **self.spec.environment()})
        if method is None:
            raise ProviderError(auth.needed_words(self.spec.name, self.spec.cmd, methods))
        self._step = f"authenticate ({method.id})"
        await self._conn.authenticate(method_id=method.id)
        self.authenticated = method.name
        self._step = "session/new"
        return await self._conn.new_session(cwd=cwd, mcp_servers=servers)

    def _recorded_session(self, session: Session) -> str | None:
        conv = session.conversation
        if conv is None:
            return None
        for record in reversed(conv.records):
            if (
                record.get("type") == "acp"
                and record.get("event") == "session"
                and record.get("agent") == self.spec.name
                and isinstance(record.get("session_id"), str)
            ):
                return str(record["session_id"])
        return None

    def _remember_modes(self, state: SessionModeState | None) -> None:
        self._modes = state
        self.client.current_mode = state.current_mode_id if state else None
        chosen = self.client.chosen_mode or self.cfg.agent_mode  # :Sightline mode, else config
        self.client.chosen_mode = chosen
        available = [modes.Mode(m.id, m.name) for m in state.available_modes] if state else []
        self._normal_mode, self._mode_refusal = modes.normal_mode(
            self.client.current_mode, available, chosen, self.read_only_mode()
        )

    def read_only_mode(self) -> str | None:
        modes = self._modes
        if modes is None:
            return None
        for mode in modes.available_modes:
            if mode.id.lower() in READ_ONLY_MODES or mode.name.lower() in READ_ONLY_MODES:
                return mode.id
        return None

    async def _set_mode(self, mode: str) -> None:
        """Plan mode asks for the agent's read-only mode when it has one (the client refuses
        writes in plan mode regardless); normal mode goes back to the agent's first mode."""
        want = (self.read_only_mode() if mode == "plan" else None) or self._normal_mode
        if want is None and self._mode_refusal:
            # No turn in a mode that never asks, unless the user named it.
            raise ProviderError(f"the ACP agent {self.spec.name!r}: {self._mode_refusal}")
        if not want or want == self.client.current_mode or self._conn is None:
            return
        assert self.session_id is not None
        try:
            await self._conn.set_session_mode(session_id=self.session_id, mode_id=want)
            self.client.current_mode = want
        except Exception as err:
            log.info("session/set_mode %s failed: %s", want, err)
            current = self.client.current_mode or ""
            if modes.bypasses(current) and current != self.cfg.agent_mode:
                raise ProviderError(
                    f"the ACP agent {self.spec.name!r} stays in its mode {current!r}, which "
                    f"does not ask, and refused the mode {want!r}: {err}"
                ) from None

    # -- the agent's own sessions (session/list, session/load) -------------------------------

    def _started(self, cwd: str) -> LoopThread:
        loop = self._loop or LoopThread()
        self._loop = loop

        async def probe() -> None:
            if self._proc is None or not self._proc.alive or self._conn is None:
                self._reset()
                await self._start(cwd)

        loop.call(probe(), self._timeout())
        return loop

    def agent_sessions(self, workspace: str) -> list[dict[str, str]]:
        """The agent's sessions of this workspace (`session/list`), newest as it orders them."""
        loop = self._started(workspace)
        caps = self.init.agent_capabilities if self.init else None
        listing = caps.session_capabilities if caps else None
        if listing is None or listing.list is None:
            raise Refused(f"sessions: the agent {self.agent_name!r} does not list its sessions")
        assert self._conn is not None
        got = loop.call(self._conn.list_sessions(cwd=workspace), self._timeout())
        return [
            {
                "id": s.session_id,
                "title": " ".join((s.title or "").split()),
                "updated": s.updated_at or "",
            }
            for s in got.sessions
        ]

    def resume_records(
        self, workspace: str, session_id: str, servername: str
    ) -> list[dict[str, Any]]:
        """Load one of the agent's sessions (`session/load`) and return its replayed history
        as history records (what the pane shows of it), the session's own record last."""
        loop = self._started(workspace)
        caps = self.init.agent_capabilities if self.init else None
        if not (caps and caps.load_session):
            raise Refused(f"sessions: the agent {self.agent_name!r} cannot resume a session")
        assert self._conn is not None
        conn = self._conn
        self.client.collected = []
        try:
            loaded = loop.call(
                conn.load_session(
                    cwd=workspace, session_id=session_id, mcp_servers=self._mcp_servers(servername)
                ),
                self._timeout(),
            )
        except Exception as err:
            raise Refused(f"sessions: the agent could not resume {session_id!r}: {err}") from None
        finally:
            records, self.client.collected = self.client.collected or [], None
        self.session_id = session_id
        self._bound = None  # the next message loads it again, in the conversation made of it
        self._remember_modes(loaded.modes if loaded else None)
        self.client.config_options = options.of(loaded.config_options if loaded else None)
        session_record = {
            "type": "acp",
            "event": "session",
            "agent": self.spec.name,
            "session_id": session_id,
        }
        return [*replay_records(records), session_record]

    # -- health ----------------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """Found, version and capabilities of the agent, for :checkhealth (starts it)."""
        out: dict[str, Any] = {
            "agent": self.spec.name,
            "cmd": list(self.spec.cmd),
            "client_writes": self.spec.client_writes,
            "scoped": self.scope_refusal() is None,
        }
        why = self.spec.missing()
        if why:
            return {**out, "found": False, "error": why}
        out["found"] = True
        loop = self._loop or LoopThread()
        self._loop = loop

        async def probe() -> None:
            if self._proc is None or not self._proc.alive or self._conn is None:
                self._reset()
                await self._start(os.getcwd())

        try:
            loop.call(probe(), self._timeout())
        except Exception as err:
            self._reset()
            return {**out, "error": f"it did not initialize: {err}"}
        init = self.init
        if init is not None:
            info = init.agent_info
            out["version"] = f"{info.name} {info.version}" if info else "unknown"
            caps = init.agent_capabilities
            prompt = caps.prompt_capabilities if caps else None
            out["capabilities"] = {
                "loadSession": bool(caps and caps.load_session),
                "embeddedContext": bool(prompt and prompt.embedded_context),
                "image": bool(prompt and prompt.image),
            }
        return out


def replay_records(updates: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """A replayed session's updates, (who, text) in order — `user`, `agent` text chunks and
    `tool` lines — as history records: consecutive chunks of one side make one message."""
    out: list[dict[str, Any]] = []
    for who, text in updates:
        if who == "tool":
            out.append(_lines_record("tool_call", [(text, None)]))
            continue
        role = "user" if who == "user" else "assistant"
        last = out[-1] if out else None
        if last is not None and last.get("type") == "message" and last["role"] == role:
            last["content"][0]["text"] += text
            if role == "user":
                last["visible"] += text
        else:
            record: dict[str, Any] = {
                "type": "message",
                "role": role,
                "content": [{"type": "text", "text": text}],
            }
            if role == "user":
                record["visible"] = text  # what the pane shows of a user message
            out.append(record)
    return [r for r in out if r.get("type") != "message" or r["content"][0]["text"].strip()]


def mcp_running(agent_pid: int) -> bool | None:
    """Whether a process the agent started runs sightline's MCP server: one of its process
    group (it runs in its own, see runtime.py) or a descendant (Codex starts its MCP servers
    in groups of their own); None where /proc cannot tell."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return None
    parents: dict[int, int] = {}
    servers: list[int] = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            pid, ppid, pgid = int(entry.name), int(fields[1]), int(fields[2])
            parents[pid] = ppid
            if MCP_MAIN.encode() in (entry / "cmdline").read_bytes():
                if pgid == agent_pid:
                    return True
                servers.append(pid)
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or not ours to read
    for pid in servers:
        seen: set[int] = set()
        while pid > 1 and pid not in seen:
            seen.add(pid)
            pid = parents.get(pid, 0)
            if pid == agent_pid:
                return True
    return False


MCP_MAIN = "from sightline.entry.mcp import main"


def mcp_boot() -> str:
    """The server's start-up as `python -c` code: it finds the package (and what the core
    found on PYTHONPATH) through sys.path, not the environment, because agents filter an MCP
    server's environment (Gemini CLI drops a PYTHONPATH given in mcpServers)."""
    paths = [PACKAGE_ROOT, *(p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p)]
    return f"import sys; sys.path[:0] = {paths!r}; {MCP_MAIN}; sys.exit(main())"


async def _quiet(coro: Any) -> None:
    try:
        await coro
    except Exception as err:
        log.info("session/cancel failed: %s", err)


def workspace_rel(ws: str, path: str) -> str:
    from sightline.domain import workspace

    return workspace.relative(ws, Path(path))


def no_answer_words(agent: str, step: str, seconds: float, tail: str) -> str:
    """The error of an agent that did not answer `step` in time (alive, but hung)."""
    msg = (
        f"the ACP agent {agent!r} did not answer {step} within {seconds:g} s; it was stopped "
        "and is started again on the next send"
    )
    return msg + (f" (its last words: {tail})" if tail else " (it wrote nothing on stderr)")


def lost_words(agent: str, what: str, resumable: bool, tail: str) -> str:
    """The error of an agent whose process or connection ended during a turn."""
    after = (
        "it is restarted on the next send"
        if resumable
        else "it is restarted on the next send and has lost the conversation: it will not "
        "know what was said above"
    )
    msg = f"the ACP agent {agent!r} {what}; {after}"
    return msg + (f" (its last words: {tail})" if tail else "")


def _has_history(session: Session) -> bool:
    conv = session.conversation
    if conv is None:
        return False
    users = [r for r in conv.records if r.get("type") == "message" and r.get("role") == "user"]
    return len(users) > 1


__all__ = ["AcpProvider"]
