"""run_command: asks every time (autoaccept never applies), then runs in the workspace root.

The command runs under /bin/sh in a process group of its own (domain/spawn.py), so a timeout,
a stopped turn or the core's end kills it with everything it started. It never sees the
provider's key, and the key is redacted from its output.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sightline.domain import narrator, sandbox, secrets, shellparse, spawn
from sightline.domain.errors import Refused
from sightline.gate import approvals
from sightline.gate.decisions import SCOPES
from sightline.gate.policy import Kind
from sightline.gate.proposals import next_id
from sightline.gate.turn_contract import ToolResult
from sightline.tools.base import Tool
from sightline.tools.output import HeadTail, clip_line

if TYPE_CHECKING:
    from sightline.gate.turn_contract import Turn

MAX_OUTPUT_BYTES = 30_000
MAX_OUTPUT_LINES = 400
READER_GRACE_S = 2.0
STOP_WAIT_S = 0.5  # how long a stop waits for the killed command's end and last output


@dataclass
class Ran:
    output: str
    code: int | None
    seconds: float
    timed_out: bool = False
    stopped: bool = False


def command_env() -> dict[str, str]:
    """The environment a command runs with: the core's, without the provider's key variables
    (the core also took them out of its own: secrets.capture_env)."""
    return secrets.scrubbed_env(dict(os.environ))


def execute(
    command: str,
    cwd: str,
    timeout_s: float,
    turn: Turn | None = None,
    on_stop: Callable[[Ran], None] | None = None,
    box: tuple[sandbox.SandboxConfig, sandbox.Status] | None = None,
) -> Ran:
    """Run `command` (in the sandbox `box`, when it is one); a stopped turn kills it with
    everything it started. `on_stop` is called on the stopping thread, while the turn stops,
    with what the command did until then: the command's own lines then come before the
    turn's stop line."""
    started = time.monotonic()
    argv = ["/bin/sh", "-c", command]
    if box is not None:
        argv = sandbox.wrap(argv, cwd, *box)
    proc, group = spawn.popen(
        argv,
        cwd=cwd,
        env=command_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    sink = HeadTail(MAX_OUTPUT_BYTES)
    assert proc.stdout is not None
    reader = threading.Thread(target=_drain, args=(proc.stdout, sink), daemon=True)
    reader.start()
    if turn is not None:

        def stop_now() -> None:
            group.kill()  # SIGKILL: the group ends at once; its last output is read briefly
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=STOP_WAIT_S)
            reader.join(STOP_WAIT_S)
            if on_stop is not None:
                output = _clip_lines(secrets.redact(sink.text()))
                on_stop(Ran(output, None, time.monotonic() - started, stopped=True))

        turn.on_cancel(stop_now)
        if turn.cancelled():
            group.kill()
    timed_out = False
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        group.kill()
        proc.wait()
    # Background processes it left behind would hold the output pipe open and keep the
    # turn waiting: they do not outlive the command.
    group.kill()
    reader.join(READER_GRACE_S)
    stopped = turn is not None and turn.cancelled()
    return Ran(
        output=_clip_lines(secrets.redact(sink.text())),
        code=None if timed_out or stopped else proc.returncode,
        seconds=time.monotonic() - started,
        timed_out=timed_out,
        stopped=stopped,
    )


def _drain(stream: Any, sink: HeadTail) -> None:
    with contextlib.suppress(OSError, ValueError):
        while chunk := stream.read1(65536):
            sink.feed(chunk)


def _clip_lines(text: str) -> str:
    lines = [clip_line(line) for line in text.splitlines()]
    if len(lines) <= MAX_OUTPUT_LINES:
        return "\n".join(lines)
    head = MAX_OUTPUT_LINES // 4
    tail = MAX_OUTPUT_LINES - head
    cut = len(lines) - head - tail
    return "\n".join([*lines[:head], f"… [{cut} lines of output cut] …", *lines[-tail:]])


def sandbox_of(session: Any) -> tuple[sandbox.SandboxConfig, sandbox.Status]:
    """The sandbox a command of this session runs in (tools.sandbox, probed)."""
    return (session.cfg.sandbox, sandbox.probe(session.cfg.sandbox))


def run_command(turn: Turn, args: dict[str, Any]) -> ToolResult:
    command = args.get("command")
    if not isinstance(command, str) or not command.strip():
        raise Refused("command: required, a non-empty string")
    session = turn.session
    box = sandbox_of(session)
    if box[0].required and not box[1].sandboxed:
        session.transcript.add_lines(narrator.command_shown(command))
        why = f"{box[1].why}, and tools.sandbox.required is set"
        session.transcript.add_note(*narrator.refused("the command", why))
        return ToolResult(f"refused by sightline: no sandbox here ({why}); it did not run.", True)
    parsed = shellparse.parse(command)
    conversation = session.conversation.id if session.conversation else None
    kept = session.approvals.check_command(session.workspace, conversation, parsed)
    if kept is not None:
        session.transcript.add_lines(narrator.command_shown(command))
        session.transcript.add_note(*narrator.kept_rule_decided(kept.effect, kept.shown()))
        if kept.effect == "deny":
            return ToolResult(
                "denied by the user (a rule they kept for this command); the command did not run.",
                True,
            )
    else:
        denied = ask_to_run(turn, command, parsed, conversation, sandbox.described(*box))
        if denied is not None:
            return denied
    timeout_s = session.cfg.command_timeout_ms / 1000
    said = threading.Lock()

    def say(ran: Ran) -> None:
        """The command's note and output, once: from this thread when it ended, or from the
        stopping one (before the turn's stop line) when the turn was stopped."""
        if said.acquire(blocking=False):
            lines = len(ran.output.splitlines())
            session.transcript.add_note(
                *narrator.command_ran(_status(ran, timeout_s), ran.seconds, lines)
            )
            if ran.output:
                session.transcript.add_output(ran.output)

    ran = execute(command, turn.workspace, timeout_s, turn, on_stop=say, box=box)
    say(ran)
    status = _status(ran, timeout_s)
    body = ran.output if ran.output else "(no output)"
    failed = ran.timed_out or ran.stopped or ran.code != 0
    rules = sandbox.refused_by(ran.output, box[0]) if failed and box[1].sandboxed else []
    if rules:
        # As far as the output tells: which of the sandbox's rules refused it.
        session.transcript.add_note(*narrator.sandbox_refused(rules))
        body += "\n[sightline: this may be the sandbox: " + "; ".join(rules) + "]"
    return ToolResult(f"{status}\n{body}", failed)


def ask_to_run(
    turn: Turn,
    command: str,
    parsed: shellparse.Parsed,
    conversation: str | None,
    how: str,
    cancelled: Callable[[], bool] | None = None,
) -> ToolResult | None:
    """Ask the user; keep the decision when they chose to. None: allowed. (Also an ACP
    agent's terminal's ask: providers/acp/terminals.py.)"""
    session = turn.session
    one_line = command.strip().replace("\n", " ⏎ ")
    summary = "run: " + (one_line if len(one_line) <= 120 else one_line[:119] + "…")
    # Shown verbatim, every line, before the user decides, with what keeping it would keep.
    rules = approvals.command_rules("allow", parsed)
    session.transcript.add_lines(
        [
            *narrator.command_shown(command),
            narrator.how_it_runs(how),
            narrator.keeps([r.shown for r in rules], parsed.unknown),
        ]
    )
    session.ui.event(
        "SightlineProposal",
        {
            "id": next_id(),
            "kind": "command",
            "summary": summary,
            "command": command,
            "autoaccept": False,
        },
    )
    offered = tuple(s for s in SCOPES if rules and (conversation or s == "always"))
    data = {"command": command, "remember": offered, "remember_why": parsed.unknown}
    item = turn.gate.ask("command", summary, data, cancelled=cancelled)
    effect = "allow" if item.decision == "accept" else "deny"
    if item.scope != "once" and item.decision is not None:
        keep = approvals.command_rules(effect, parsed)
        try:
            session.approvals.remember(session.workspace, conversation, item.scope, keep)
            session.transcript.add_note(*narrator.kept(effect, item.scope, [r.shown for r in keep]))
        except Refused as err:
            session.transcript.add_note(*narrator.refused("keeping the decision", err.message))
    if item.decision != "accept" or turn.cancelled():
        told = "denied by the user" + (f": {item.reason}" if item.reason else "")
        session.transcript.add_note(*narrator.rejected(item.reason))
        return ToolResult(told + "; the command did not run.", True)
    return None


def _status(ran: Ran, timeout_s: float) -> str:
    """How the command ended, as the model reads it first (and the user on the note)."""
    if ran.timed_out:
        return (
            f"timed out after {timeout_s:g} s (tools.command_timeout_ms); "
            "the command and everything it started were killed"
        )
    if ran.stopped:
        return "stopped with the turn; the command and everything it started were killed"
    return f"exit code {ran.code}"


TOOLS = [
    Tool(
        name="run_command",
        kind=Kind.EXEC,
        description=(
            "Run a shell command (/bin/sh -c) in the workspace root, after the user allows it "
            "(they see it verbatim and may deny it). Output (stdout and stderr together) is "
            "bounded; the command is killed after tools.command_timeout_ms, and background "
            "processes do not outlive it. Prefer read_file, list_files and grep for reading."
        ),
        input_schema={
            "type": "object",
            "properties": {"command": {"type": "string", "description": "The command line."}},
            "required": ["command"],
        },
        handler=run_command,
    ),
]
