"""ACP terminals (`terminal/create`, `output`, `wait_for_exit`, `kill`, `release`): an agent's
command runs as sightline's own run_command does (tools/command.py).

* It is asked through the gate, shown verbatim first, unless a permission the user just
  allowed in this turn names the same command (the agent asked already); plan mode and a
  Change with Agent turn refuse it. A kept approval decides it as it decides run_command
  (`Terminals.asked`, the one place a terminal is allowed), and it runs in the same sandbox
  (tools.sandbox).
* It runs in the workspace (a `cwd` outside it is refused), with the core's keyless
  environment and the agent's variables, in a process group of its own under the watchdog
  (domain/spawn.py): a stop, the turn's end or the core's end kills it with everything it
  started.
* Its output is kept (bounded, the first bytes dropped past the agent's limit) and, when it
  has ended, shown once in the transcript as run_command's: the exit status and the output
  folded under it.

The gate and the process wait on worker threads; the handlers run on the provider's loop.
"""

from __future__ import annotations

import contextlib
import itertools
import shlex
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from sightline.domain import narrator, sandbox, secrets, shellparse, spawn, workspace
from sightline.domain.errors import Refused

if TYPE_CHECKING:
    from sightline.gate.turn_contract import Session, Turn


class TurnContext(Protocol):
    """What terminals need of client.py's TurnContext (which holds them)."""

    @property
    def turn(self) -> Turn: ...
    @property
    def session(self) -> Session: ...
    def over(self) -> bool: ...


# What sightline keeps of a terminal's output when the agent sets no limit.
DEFAULT_OUTPUT_BYTES = 1 << 20
STOP_WAIT_S = 0.5
_ids = itertools.count(1)


@dataclass
class Terminal:
    id: str
    command: str  # as shown: the argv joined for a shell
    proc: subprocess.Popen[bytes]
    group: spawn.Group
    limit: int
    started: float = field(default_factory=time.monotonic)
    output: bytearray = field(default_factory=bytearray)
    truncated: bool = False
    shown: bool = False  # its end was said in the transcript
    stopped: bool = False
    reader: threading.Thread | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def feed(self, chunk: bytes) -> None:
        with self.lock:
            self.output += chunk
            if len(self.output) > self.limit:
                # The protocol keeps the end: bytes are dropped from the start, at a
                # character boundary.
                cut = len(self.output) - self.limit
                while cut < len(self.output) and (self.output[cut] & 0xC0) == 0x80:
                    cut += 1
                del self.output[:cut]
                self.truncated = True

    def text(self) -> str:
        with self.lock:
            return secrets.redact(bytes(self.output).decode("utf-8", errors="replace"))

    def exit_status(self) -> tuple[int | None, str | None] | None:
        """(exit code, signal name) once it ended, else None."""
        code = self.proc.poll()
        if code is None:
            return None
        if code < 0:
            import signal

            with contextlib.suppress(ValueError):
                return None, signal.Signals(-code).name
            return None, str(-code)
        return code, None


def command_line(command: str, args: Sequence[str] | None) -> tuple[list[str], str]:
    """(argv, as shown): `command` alone runs under /bin/sh -c (agents send whole shell
    lines), with `args` it is run as it is."""
    if args:
        argv = [command, *args]
        return argv, shlex.join(argv)
    return ["/bin/sh", "-c", command], command


class Terminals:
    """The terminals of one turn; everything left is killed when the turn ends."""

    def __init__(self) -> None:
        self._open: dict[str, Terminal] = {}
        self._lock = threading.Lock()

    # -- create: asked, then started (on a worker thread) -------------------------------------

    def create(
        self,
        ctx: TurnContext,
        command: str,
        args: Sequence[str] | None,
        env: dict[str, str],
        cwd: str | None,
        limit: int | None,
        allowed: Callable[[str], bool],
    ) -> str:
        session, turn = ctx.session, ctx.turn
        argv, shown = command_line(command, args)
        if ctx.over():
            raise Refused("the turn was stopped")
        if session.mode == "plan":
            raise Refused(f"run {shown}: plan mode runs nothing")
        if turn.scope is not None:
            raise Refused(f"run {shown}: Change with Agent may change only the selection")
        where = workspace.resolve(session.workspace, cwd) if cwd else session.workspace
        from sightline.tools import command as run  # run_command's rules, one place

        box = run.sandbox_of(session)
        if box[0].required and not box[1].sandboxed:
            why = f"{box[1].why}, and tools.sandbox.required is set"
            session.transcript.add_lines(narrator.command_shown(shown))
            session.transcript.add_note(*narrator.refused("the command", why))
            raise Refused(f"no sandbox here ({why}); {shown!r} did not run")
        if not self.asked(ctx, shown, allowed, box):
            raise Refused(f"denied by the user; {shown!r} did not run")
        proc, group = spawn.popen(
            sandbox.wrap(argv, session.workspace, *box),
            cwd=str(where),
            env={**run.command_env(), **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        term = Terminal(
            f"term-{next(_ids)}", shown, proc, group, max(1, limit or DEFAULT_OUTPUT_BYTES)
        )
        term.reader = threading.Thread(target=_drain, args=(proc.stdout, term), daemon=True)
        term.reader.start()

        def stop_now() -> None:
            term.stopped = True
            group.kill()

        turn.on_cancel(stop_now)
        with self._lock:
            self._open[term.id] = term
        return term.id

    def asked(
        self,
        ctx: TurnContext,
        shown: str,
        allowed: Callable[[str], bool],
        box: tuple[sandbox.SandboxConfig, sandbox.Status],
    ) -> bool:
        """Whether the user lets `shown` run: a permission allowed in this turn that names it
        (the agent asked already), else an approval they kept for it (matched on the parsed
        command, as run_command's), else the gate, asked as run_command asks."""
        if allowed(shown):
            return True
        from sightline.tools import command as run

        session, turn = ctx.session, ctx.turn
        parsed = shellparse.parse(shown)
        conversation = session.conversation.id if session.conversation else None
        kept = session.approvals.check_command(session.workspace, conversation, parsed)
        if kept is not None:
            session.transcript.add_lines(narrator.command_shown(shown))
            session.transcript.add_note(*narrator.kept_rule_decided(kept.effect, kept.shown()))
            return kept.effect == "allow"
        how = sandbox.described(*box)
        denied = run.ask_to_run(turn, shown, parsed, conversation, how, cancelled=ctx.over)
        return denied is None and not turn.cancelled()

    # -- the rest (output is read on the loop; waits on a worker thread) ---------------------

    def get(self, terminal_id: str) -> Terminal:
        with self._lock:
            term = self._open.get(terminal_id)
        if term is None:
            raise Refused(f"no terminal {terminal_id!r} (released, or of another turn)")
        return term

    def wait(self, ctx: TurnContext, terminal_id: str) -> tuple[int | None, str | None]:
        term = self.get(terminal_id)
        term.proc.wait()
        # Background processes it left would hold the output open: they do not outlive it.
        term.group.kill()
        if term.reader is not None:
            term.reader.join(STOP_WAIT_S * 4)
        self.say(ctx, term)
        got = term.exit_status()
        return got if got is not None else (None, None)

    def kill(self, ctx: TurnContext, terminal_id: str) -> None:
        term = self.get(terminal_id)
        term.group.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            term.proc.wait(timeout=STOP_WAIT_S)

    def release(self, ctx: TurnContext, terminal_id: str) -> None:
        term = self.get(terminal_id)
        self.kill(ctx, terminal_id)
        self.say(ctx, term)
        with self._lock:
            self._open.pop(terminal_id, None)

    def close_all(self, ctx: TurnContext | None) -> None:
        """The turn ended: every terminal still open is killed (and said, when it can be)."""
        with self._lock:
            left, self._open = list(self._open.values()), {}
        for term in left:
            term.group.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                term.proc.wait(timeout=STOP_WAIT_S)
            if ctx is not None and not ctx.turn.cancelled():
                self.say(ctx, term)

    def say(self, ctx: TurnContext, term: Terminal) -> None:
        """Its end in the transcript, once: as run_command's note, the output folded."""
        with term.lock:
            if term.shown:
                return
            term.shown = True
        got = term.exit_status()
        if term.stopped or ctx.turn.cancelled():
            status = "stopped with the turn; the command and everything it started were killed"
        elif got is None:
            status = "killed"
        elif got[1] is not None:
            status = f"killed by {got[1]}"
        else:
            status = f"exit code {got[0]}"
        output = term.text()
        lines = len(output.splitlines())
        seconds = time.monotonic() - term.started
        ctx.session.transcript.add_note(*narrator.command_ran(status, seconds, lines))
        if output:
            ctx.session.transcript.add_output(output)
        ctx.session.ui.schedule()


def _drain(stream: Any, term: Terminal) -> None:
    with contextlib.suppress(OSError, ValueError):
        while chunk := stream.read1(65536):
            term.feed(chunk)
