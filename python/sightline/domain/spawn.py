"""Every process sightline starts: in a process group of its own, killed with everything it
started when its owner ends — a stop, a timeout, a restart, Neovim quitting, the core's crash
or SIGKILL (which no exit hook survives).

The child runs under a watchdog: `/bin/sh` starts, in the new group, a background reader of a
socket whose other end only the core holds (close-on-exec: no other child inherits it), then
execs the command. When that end closes — `Lifeline.cut()`, or the kernel closing it as the
core dies — the reader sees end-of-file and kills its group, itself included. Killing from
inside the group is safe from pid reuse: the group exists as long as the watchdog does.

The lifeline reaches the child as its stdin (a command, a key command: they read nothing), or
as its stderr (an ACP agent or an MCP server, whose stdin is the protocol; the MCP SDK spawns
the server itself and passes only stdio through): then the core reads the child's stderr from
the same socket (`Lifeline.read_lines`).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import select
import signal
import socket
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any, Protocol

# $1: where the lifeline is, 0 (stdin: the command gets /dev/null instead) or 2 (stderr: the
# command's stderr goes into the socket and the core reads it there); the rest: the command.
# (dash takes one-digit fds only, hence stdio and fd 3.) The reader holds nothing else of the
# child's, so the core still sees the end of the command's output.
WATCHDOG = (
    'exec 3<&"$1"; [ "$1" = 0 ] && exec </dev/null; shift; '
    "{ read -r _ <&3; kill -KILL 0; } </dev/null >/dev/null 2>&1 & "
    'exec 3<&-; exec "$@"'
)
SHELL = "/bin/sh"
STDIN, STDERR = "stdin", "stderr"
MAX_LINE_BYTES = 4096
MAX_CAPTURE_BYTES = 1 << 20
READER_GRACE_S = 2.0


class Lifeline:
    """The socket pair a watchdog waits on; `cut()` kills the child's group (once)."""

    def __init__(self, on: str = STDIN) -> None:
        if on not in (STDIN, STDERR):
            raise ValueError(f"a lifeline is on stdin or stderr, not {on!r}")
        self.on = on
        # Both ends close-on-exec: the child gets its end as stdin or stderr (dup2), no other
        # child inherits either.
        self.core, self.child = socket.socketpair()
        self._lock = threading.Lock()
        self._reading = threading.Lock()
        self._cut = False

    def argv(self, argv: Sequence[str]) -> list[str]:
        """The command line that runs `argv` under the watchdog."""
        if not argv:
            raise ValueError("empty command")
        return [SHELL, "-c", WATCHDOG, "sh", "0" if self.on == STDIN else "2", *argv]

    def stdio(self) -> dict[str, Any]:
        """The Popen argument that hands the child its end."""
        return {self.on: self.child}

    def spawned(self) -> None:
        """The child holds its end now (or never will): the core lets go of it."""
        with contextlib.suppress(OSError):
            self.child.close()

    def cut(self) -> None:
        with self._lock:
            if self._cut:
                return
            self._cut = True
        # shutdown() first: it wakes a thread reading the core's end (read_lines), which
        # close() alone would leave blocked.
        with contextlib.suppress(OSError):
            self.core.shutdown(socket.SHUT_RDWR)
        self.core.close()

    def read_lines(self, on_line: Callable[[str], None]) -> None:
        """Read the child's stderr (a lifeline on stderr) on a daemon thread, line by line
        (long lines cut); it ends with the child's group or the cut."""

        def run() -> None:
            rest = b""
            with contextlib.suppress(OSError, ValueError):
                while select.select([self.core], [], []):
                    with self._reading:  # flushed() waits for what was read to be handed on
                        data = self.core.recv(65536, socket.MSG_DONTWAIT)
                        if not data:
                            break
                        *lines, rest = (rest + data).split(b"\n")
                        rest = rest[-MAX_LINE_BYTES:]
                        for line in lines:
                            on_line(line[:MAX_LINE_BYTES].decode(errors="replace"))
            if rest:
                on_line(rest.decode(errors="replace"))

        threading.Thread(target=run, name="sightline-stderr", daemon=True).start()

    def flushed(self, timeout_s: float = 0.5) -> None:
        """Wait (briefly) until read_lines has handed on everything the child wrote so far:
        the child's last words, asked for when it died, come in on another thread."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._reading:
                try:
                    pending = struct.unpack(
                        "i", fcntl.ioctl(self.core.fileno(), termios.FIONREAD, b"\0\0\0\0")
                    )[0]
                except (OSError, ValueError):
                    return  # closed: nothing more comes
                if pending == 0:
                    return
            time.sleep(0.005)


class _Proc(Protocol):
    @property
    def pid(self) -> int: ...
    @property
    def returncode(self) -> int | None: ...


class Group:
    """A started process's group: `kill()` ends it with all it started, at most once."""

    def __init__(self, proc: _Proc, lifeline: Lifeline):
        self.proc = proc
        self.lifeline = lifeline
        self._lock = threading.Lock()
        self.killed = False

    def kill(self) -> None:
        with self._lock:
            if self.killed:
                return
            self.killed = True
            # At once while the leader is not reaped (its pid is the group's id and cannot be
            # reused yet); in any case the cut makes the watchdog kill whatever is left.
            if self.proc.returncode is None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
        self.lifeline.cut()


def popen(
    argv: Sequence[str], on: str = STDIN, **kwargs: Any
) -> tuple[subprocess.Popen[Any], Group]:
    """subprocess.Popen of `argv` in its own group under the watchdog, the lifeline `on` its
    stdin or stderr (`group.lifeline.read_lines` then reads the stderr)."""
    lifeline = Lifeline(on)
    try:
        proc = subprocess.Popen(
            lifeline.argv(argv), start_new_session=True, **lifeline.stdio(), **kwargs
        )
    except BaseException:
        lifeline.cut()
        raise
    finally:
        lifeline.spawned()
    return proc, Group(proc, lifeline)


async def exec_async(
    argv: Sequence[str], on: str = STDIN, **kwargs: Any
) -> tuple[asyncio.subprocess.Process, Group]:
    """asyncio.create_subprocess_exec of `argv`, as popen()."""
    lifeline = Lifeline(on)
    try:
        shell, *args = lifeline.argv(argv)
        proc = await asyncio.create_subprocess_exec(
            shell, *args, start_new_session=True, **lifeline.stdio(), **kwargs
        )
    except BaseException:
        lifeline.cut()
        raise
    finally:
        lifeline.spawned()
    return proc, Group(proc, lifeline)


def run(argv: Sequence[str], timeout_s: float, **kwargs: Any) -> subprocess.CompletedProcess[bytes]:
    """subprocess.run capturing bytes, with a timeout that kills the whole group (then
    TimeoutExpired), and nothing left behind however it ends: the output is what was written
    until the command itself exited; background children it left are killed then."""
    proc, group = popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)
    out: list[bytes] = []
    err: list[bytes] = []
    readers = [
        threading.Thread(target=_read_all, args=(proc.stdout, out), daemon=True),
        threading.Thread(target=_read_all, args=(proc.stderr, err), daemon=True),
    ]
    for reader in readers:
        reader.start()
    try:
        proc.wait(timeout_s)
    finally:
        group.kill()
        proc.wait()
        for reader in readers:
            reader.join(READER_GRACE_S)
    return subprocess.CompletedProcess(proc.args, proc.returncode, b"".join(out), b"".join(err))


def _read_all(stream: Any, into: list[bytes]) -> None:
    held = 0
    with contextlib.suppress(OSError, ValueError):
        while (chunk := stream.read1(65536)) and held < MAX_CAPTURE_BYTES:
            into.append(chunk)
            held += len(chunk)
