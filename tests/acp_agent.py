"""A scripted ACP agent on the SDK's agent side, for the acp provider's tests.

`python tests/acp_agent.py --script FILE --log FILE`: FILE is JSON
`{"caps": {...}, "turns": [[step, ...], ...]}`; each prompt plays the next turn (counted
in the log, so an agent restarted after a crash goes on with the next one). Every request
the client sends and every answer it gives is appended to the log as one JSON line.

caps: load, embedded, image, modes (ids, the first current), hang_init (initialize never answers),
auth (advertised methods, as the protocol's JSON; session/new answers auth_required until one
of them was sent in `authenticate`), options (session config options, the protocol's JSON;
session/set_config_option sets their current value), sessions (what session/list answers),
replay (what session/load replays: [{"user": text} | {"say": text}, ...]),
commands ([[name, description, hint?], ...]: announced right after session/new).
Steps: {"say": text, "chunks": n?}, {"think": text, "chunks": n?},
{"tool": {id, title, kind?, status?, locations?, diff?}}, {"update": {id, status, diff?}},
{"plan": [[text, status], ...]},
{"read": path, "line"?, "limit"?}, {"write": path, "content": text},
{"permission": {id, title, kind, diff?}}, {"disk_write": path, "content": text, "keep_mtime"?},
{"crash": code}, {"wait_cancel": true},
{"terminal": command, "args"?, "limit"?, "wait"?: true (wait, output, release),
"kill_after_ms"?: n},
{"mode_update": id} (current_mode_update), {"usage": {inputTokens, outputTokens, ...}} (the
turn's PromptResponse.usage), {"option_update": {id: value}} (config_option_update),
{"commands": [[name, description, hint?], ...]} (available_commands_update),
{"together": [step, ...]} (sent at once),
{"detach": step} (not waited for), {"raw": line} (written as is),
{"stream": n, "size": k, "pause_ms": t?, "prose": bool?} (bench).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    RequestError,
    run_agent,
    text_block,
    update_agent_message_text,
    update_agent_thought_text,
    update_user_message_text,
)
from acp.helpers import (
    plan_entry,
    start_tool_call,
    tool_diff_content,
    update_plan,
    update_tool_call,
)
from acp.schema import (
    AgentCapabilities,
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    ContentToolCallContent,
    CurrentModeUpdate,
    FileEditToolCallContent,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    StopReason,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolCallUpdate,
    UnstructuredCommandInput,
)
from acp.stdio import stdio_streams

# What a tool call's content may hold (the SDK's helpers return one kind each).
ToolContent = list[ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent]


def _dump(value: Any) -> Any:
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(value, list):
        return [_dump(v) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v) for k, v in value.items()}
    return value


class ScriptedAgent:
    def __init__(self, script: dict[str, Any], log: Path):
        self.script = script
        self.caps = script.get("caps", {})
        self.log_path = log
        self.conn: Any = None
        self.writer: asyncio.StreamWriter | None = None
        self.detached: set[asyncio.Task[Any]] = set()
        self.cancelled = asyncio.Event()
        self.authenticated: str | None = None
        self.usage: dict[str, Any] | None = None
        self.options: list[dict[str, Any]] = [dict(o) for o in self.caps.get("options", [])]

    def log(self, kind: str, **data: Any) -> None:
        with self.log_path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"kind": kind, **_dump(data)}) + "\n")

    def prompts_so_far(self) -> int:
        if not self.log_path.exists():
            return 0
        return sum(
            1 for line in self.log_path.read_text().splitlines() if '"kind": "prompt"' in line
        )

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: Any = None,
        client_info: Any = None,
        **kw: Any,
    ) -> InitializeResponse:
        keys = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "OPENROUTER_API_KEY")
        self.log(
            "initialize",
            capabilities=client_capabilities,
            client=client_info,
            pid=os.getpid(),
            keys={k: os.environ[k] for k in keys if k in os.environ},
        )
        if self.caps.get("hang_init"):
            sys.stderr.write("stuck: waiting for a login that never comes\n")
            sys.stderr.flush()
            await asyncio.sleep(3600)
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=bool(self.caps.get("load")),
                session_capabilities=(
                    SessionCapabilities(list=SessionListCapabilities())
                    if "sessions" in self.caps
                    else None
                ),
                prompt_capabilities=PromptCapabilities(
                    embedded_context=bool(self.caps.get("embedded")),
                    image=bool(self.caps.get("image")),
                ),
            ),
            agent_info=Implementation(name="scripted-agent", version="9.9.9"),
            auth_methods=self.caps.get("auth", []),
        )

    def _modes(self) -> SessionModeState | None:
        modes = self.caps.get("modes")
        if not modes:
            return None
        return SessionModeState(
            current_mode_id=modes[0],
            available_modes=[SessionMode(id=m, name=m.title()) for m in modes],
        )

    async def new_session(self, cwd: str, mcp_servers: Any = None, **kw: Any) -> NewSessionResponse:
        self.log("new_session", cwd=cwd, mcp_servers=mcp_servers)
        if self.caps.get("auth") and self.authenticated is None:
            raise RequestError.auth_required()
        sid = f"s-{os.getpid()}"
        if self.caps.get("commands"):
            # Announced after the answer, as agents do (the session exists by then).
            loop = asyncio.get_running_loop()
            loop.call_later(
                0.05, lambda: loop.create_task(self.commands(sid, self.caps["commands"]))
            )
        return NewSessionResponse(
            session_id=sid,
            modes=self._modes(),
            config_options=self.options or None,  # type: ignore[arg-type]
        )

    async def commands(self, sid: str, commands: list[list[str]]) -> None:
        listed = [
            AvailableCommand(
                name=c[0],
                description=c[1],
                input=AvailableCommandInput(root=UnstructuredCommandInput(hint=c[2]))
                if len(c) > 2
                else None,
            )
            for c in commands
        ]
        update = AvailableCommandsUpdate(
            session_update="available_commands_update", available_commands=listed
        )
        await self.conn.session_update(sid, update)

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: Any = None, **kw: Any
    ) -> LoadSessionResponse:
        self.log("load_session", cwd=cwd, session_id=session_id)
        # A replay of the history, which the client must not show twice.
        for item in self.caps.get("replay") or [{"say": "REPLAYED"}]:
            if "user" in item:
                await self.conn.session_update(session_id, update_user_message_text(item["user"]))
            else:
                await self.conn.session_update(session_id, update_agent_message_text(item["say"]))
        return LoadSessionResponse(
            modes=self._modes(),
            config_options=self.options or None,  # type: ignore[arg-type]
        )

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kw: Any
    ) -> SetSessionModeResponse:
        self.log("set_mode", mode_id=mode_id)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kw: Any
    ) -> SetSessionConfigOptionResponse:
        self.log("set_config_option", config_id=config_id, value=value)
        self._set_option(config_id, value)
        return SetSessionConfigOptionResponse(config_options=self.options)  # type: ignore[arg-type]

    def _set_option(self, config_id: str, value: Any) -> None:
        for opt in self.options:
            if opt["id"] == config_id:
                if value not in [o["value"] for o in opt["options"]]:
                    raise RequestError.invalid_params({"value": value})
                opt["currentValue"] = value

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kw: Any
    ) -> ListSessionsResponse:
        self.log("list_sessions", cwd=cwd)
        return ListSessionsResponse(sessions=self.caps.get("sessions", []))

    async def cancel(self, session_id: str, **kw: Any) -> None:
        self.log("cancel")
        self.cancelled.set()

    async def authenticate(self, method_id: str, **kw: Any) -> None:
        known = [m["id"] for m in self.caps.get("auth", [])]
        method: dict[str, Any] = next(
            (m for m in self.caps.get("auth", []) if m["id"] == method_id), {}
        )
        # What an env_var method reads: whether each of its variables is set (never a value).
        seen = {v["name"]: bool(os.environ.get(v["name"])) for v in method.get("vars", [])}
        self.log("authenticate", method_id=method_id, vars=seen)
        if method_id not in known:
            raise RequestError.invalid_params({"methodId": method_id})
        self.authenticated = method_id

    async def prompt(self, session_id: str, prompt: list[Any], **kw: Any) -> PromptResponse:
        index = self.prompts_so_far()
        self.log("prompt", blocks=prompt)
        self.cancelled.clear()
        self.usage = None
        turns = self.script.get("turns", [])
        steps = turns[index] if index < len(turns) else [{"say": "(no more script)"}]
        for step in steps:
            stop = await self._step(session_id, step)
            if stop:
                return PromptResponse(stop_reason=stop, usage=self.usage)
        return PromptResponse(stop_reason="end_turn", usage=self.usage)

    async def conn_write(self, line: str) -> None:
        assert self.writer is not None
        self.writer.write(line.encode() + b"\n")
        await self.writer.drain()

    async def say(self, sid: str, text: str) -> None:
        await self.conn.session_update(sid, update_agent_message_text(text))

    async def _step(self, sid: str, step: dict[str, Any]) -> StopReason | None:
        conn = self.conn
        if "say" in step:
            text, n = step["say"], max(1, int(step.get("chunks", 1)))
            size = -(-len(text) // n)
            for i in range(0, len(text), size):
                await self.say(sid, text[i : i + size])
        elif "think" in step:
            text, n = step["think"], max(1, int(step.get("chunks", 1)))
            size = -(-len(text) // n)
            for i in range(0, len(text), size):
                await conn.session_update(sid, update_agent_thought_text(text[i : i + size]))
        elif "tool" in step:
            t = step["tool"]
            content: ToolContent | None = (
                [tool_diff_content(d["path"], d["new"], d.get("old")) for d in [t["diff"]]]
                if t.get("diff")
                else None
            )
            locations = [ToolCallLocation(path=p, line=ln) for p, ln in t.get("locations", [])]
            await conn.session_update(
                sid,
                start_tool_call(
                    t["id"],
                    t["title"],
                    kind=t.get("kind"),
                    status=t.get("status"),
                    content=content,
                    locations=locations or None,
                ),
            )
        elif "update" in step:
            u = step["update"]
            await conn.session_update(sid, update_tool_call(u["id"], status=u.get("status")))
        elif "plan" in step:
            entries = [plan_entry(text, status=status) for text, status in step["plan"]]
            await conn.session_update(sid, update_plan(entries))
        elif "read" in step:
            try:
                res = await conn.read_text_file(
                    session_id=sid,
                    path=step["read"],
                    line=step.get("line"),
                    limit=step.get("limit"),
                )
                self.log("read_result", content=res.content)
                await self.say(sid, f"[read ok {len(res.content)}]")
            except RequestError as err:
                self.log("read_error", message=str(err))
                await self.say(sid, f"[read refused: {err}]")
        elif "write" in step:
            try:
                await conn.write_text_file(
                    session_id=sid, path=step["write"], content=step["content"]
                )
                self.log("write_result", ok=True)
                await self.say(sid, "[write ok]")
            except RequestError as err:
                self.log("write_result", ok=False, message=str(err))
                await self.say(sid, f"[write refused: {err}]")
        elif "permission" in step:
            p = step["permission"]
            content = (
                [tool_diff_content(d["path"], d["new"], d.get("old")) for d in [p["diff"]]]
                if p.get("diff")
                else None
            )
            options = [
                PermissionOption(option_id="yes", name="Allow once", kind="allow_once"),
                PermissionOption(option_id="always", name="Allow always", kind="allow_always"),
                PermissionOption(option_id="no", name="Reject", kind="reject_once"),
            ]
            call = ToolCallUpdate(
                tool_call_id=p["id"],
                title=p["title"],
                kind=p.get("kind"),
                content=content,
                locations=[ToolCallLocation(path=x) for x in p.get("paths", [])] or None,
            )
            res = await conn.request_permission(session_id=sid, tool_call=call, options=options)
            outcome = res.outcome
            chosen = getattr(outcome, "option_id", None) or outcome.outcome
            self.log("permission_result", chosen=chosen)
            await self.say(sid, f"[permission {chosen}]")
        elif "disk_write" in step:
            path = Path(step["disk_write"])
            before = path.stat() if path.exists() else None
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(step["content"])
            if step.get("keep_mtime") and before is not None:
                os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        elif "detach" in step:
            # A step left running: the turn goes on (and may end) without its answer.
            task = asyncio.get_running_loop().create_task(self._step(sid, step["detach"]))
            self.detached.add(task)
            task.add_done_callback(self.detached.discard)
        elif "together" in step:
            # Steps sent at once, without waiting for one another's answers.
            await asyncio.gather(*(self._step(sid, s) for s in step["together"]))
        elif "raw" in step:
            # A line written as is on the agent's stdout (a malformed message).
            await self.conn_write(step["raw"])
        elif "terminal" in step:
            try:
                res = await conn.create_terminal(
                    session_id=sid,
                    command=step["terminal"],
                    args=step.get("args"),
                    output_byte_limit=step.get("limit"),
                )
                self.log("terminal_result", ok=True, result=res)
            except RequestError as err:
                self.log("terminal_result", ok=False, code=err.code, message=str(err))
                await self.say(sid, "[terminal refused]")
                return None
            tid = res.terminal_id
            if step.get("wait"):
                done = await conn.wait_for_terminal_exit(session_id=sid, terminal_id=tid)
                out = await conn.terminal_output(session_id=sid, terminal_id=tid)
                self.log("terminal_exit", exit=done, output=out)
                await conn.release_terminal(session_id=sid, terminal_id=tid)
                await self.say(sid, f"[terminal exit {done.exit_code}]")
            elif step.get("kill_after_ms") is not None:
                await asyncio.sleep(step["kill_after_ms"] / 1000)
                await conn.kill_terminal(session_id=sid, terminal_id=tid)
                done = await conn.wait_for_terminal_exit(session_id=sid, terminal_id=tid)
                self.log("terminal_exit", exit=done)
            else:
                await self.say(sid, "[terminal answered]")
        elif "mode_update" in step:
            await conn.session_update(
                sid,
                CurrentModeUpdate(
                    session_update="current_mode_update", current_mode_id=step["mode_update"]
                ),
            )
        elif "option_update" in step:
            for config_id, value in step["option_update"].items():
                self._set_option(config_id, value)
            update = ConfigOptionUpdate(
                session_update="config_option_update",
                config_options=self.options,  # type: ignore[arg-type]
            )
            await conn.session_update(sid, update)
        elif "usage" in step:
            self.usage = step["usage"]
        elif "commands" in step:
            await self.commands(sid, step["commands"])
        elif "crash" in step:
            os._exit(int(step["crash"]))
        elif "wait_cancel" in step:
            await asyncio.wait_for(self.cancelled.wait(), 30)
            return "cancelled"
        elif "stream" in step:
            chunk = "x" * int(step.get("size", 8))
            t0 = time.monotonic()
            pause = float(step.get("pause_ms", 0)) / 1000
            for i in range(int(step["stream"])):
                # A line break now and then, a paragraph rarely, as a model's reply has.
                tail = " \n\n" if i % 50 == 49 else " \n" if i % 12 == 11 else " "
                await self.say(sid, chunk + tail if step.get("prose") else chunk)
                if pause:
                    await asyncio.sleep(pause)
            self.log("streamed", seconds=time.monotonic() - t0)
        return None

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return {}

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--script", required=True)
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    script = json.loads(Path(args.script).read_text())
    agent = ScriptedAgent(script, Path(args.log))

    async def serve() -> None:
        reader, writer = await stdio_streams(limit=64 * 1024 * 1024)
        agent.writer = writer
        await run_agent(agent, writer, reader)  # type: ignore[arg-type]

    asyncio.run(serve())


if __name__ == "__main__":
    main()


__all__ = ["text_block"]
