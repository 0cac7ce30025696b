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
from sightline.editor.port import EditorError
from sightline.gate import checkpoint
from sightline.providers.acp import modes, presets, snapshot
from sightline.providers.acp.client import (
    MCP_SERVER,
    SightlineClient,
    TurnContext,
    _lines_record,
)
from sightline.providers.acp.prompt import has_images, prompt_blocks
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

    @property
    def agent_name(self) -> str:
        """What the bar names the agent: the name its initialize answer gave (agentInfo.name)
        once it has; before, a preset's name, and nothing for an agent of one's own command
        (its command, `python3` or `node`, would name the interpreter, not the agent)."""
        info = self.init.agent_info if self.init is not None else None
        if info is not None and info.name:
            return info.name
        return "" if self.cfg.agent is not None and self.cfg.agent.cmd else self.spec.name

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
            assert self._conn is not None and self.session_id is not None
            future = loop.submit(self._conn.prompt(session_id=self.session_id, prompt=blocks))
            response = self._wait(turn, future)
            if response is None:
                return "stopped"
            self.client.flush_thought(ctx)
            self.client.flush_text(ctx)
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
            if not turn.cancelled():
                self.client.flush_thought(ctx)
                self.client.flush_text(ctx)
            self._bypassed(session, turn, before, ctx)

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
        paths = [p for p in snapshot.changed(before, after) if p not in written]
        if not (before.complete and after.complete):
            session.transcript.add_note(*narrator.bypass_unchecked())
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
            fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=False
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
                session.transcript.add_note(*narrator.agent_resumed(old))
                return
            except Exception as err:
                log.info("session/load of %s failed: %s", old, err)
            finally:
                self.client.loading = False
        created = await self._conn.new_session(cwd=session.workspace, mcp_servers=servers)
        self.session_id = created.session_id
        self._remember_modes(created.modes)
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
        self.client.chosen_mode = self.cfg.agent_mode
        available = [modes.Mode(m.id, m.name) for m in state.available_modes] if state else []
        self._normal_mode, self._mode_refusal = modes.normal_mode(
            self.client.current_mode, available, self.cfg.agent_mode, self.read_only_mode()
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


def mcp_running(agent_pid: int) -> bool | None:
    """Whether a process of the agent's process group (it runs in its own, see runtime.py)
    runs sightline's MCP server; None where /proc cannot tell."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        return None
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            pgid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[2])
            if pgid == agent_pid and MCP_MAIN.encode() in (entry / "cmdline").read_bytes():
                return True
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or not ours to read
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
